// litmix playground: pickers, Run, results, shareable links; the step
// view of operational models lives in step.js.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const editor = LitmixEditor.create($("editor"));
  const exampleSel = $("example");
  const modelSel = $("model");
  const whyBox = $("why");
  const catText = $("cat");
  const results = $("results");
  const status = $("status");
  let examples = [];
  let running = false;
  // Operational models (a step view) and the default model per arch.
  let operational = new Set();
  let defaults = {};
  const stepper = LitmixStep.create($("step"), () => ({ source: editor.get(), model: modelSel.value }));
  let stepKey = null;

  // One element builder for the page (step.js, loaded first, defines it).
  const h = LitmixStep.h;

  // --- URL fragment: #model=NAME&test=BASE64URL(&cat=BASE64URL) ---
  function b64encode(text) {
    const bytes = new TextEncoder().encode(text);
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) {
      bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    }
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function b64decode(s) {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    return new TextDecoder().decode(bytes);
  }
  function linkFragment() {
    const parts = [];
    if (modelSel.value) parts.push("model=" + encodeURIComponent(modelSel.value));
    parts.push("test=" + b64encode(editor.get()));
    if (catText.value.trim()) parts.push("cat=" + b64encode(catText.value));
    const picks = stepper.visible() ? stepper.picks() : [];
    if (picks.length) parts.push("picks=" + picks.join(","));
    return "#" + parts.join("&");
  }
  function readFragment() {
    const frag = location.hash.replace(/^#/, "");
    if (!frag) return null;
    const params = new URLSearchParams(frag);
    try {
      return {
        model: params.get("model") || "",
        test: params.has("test") ? b64decode(params.get("test")) : null,
        cat: params.has("cat") ? b64decode(params.get("cat")) : "",
        example: params.get("example"),
        picks: (params.get("picks") || "").split(",").filter((x) => /^\d+$/.test(x)).map(Number),
      };
    } catch (e) {
      setStatus("The link's test could not be decoded.", true);
      return null;
    }
  }

  function setStatus(text, bad) {
    status.textContent = text;
    status.className = bad ? "bad" : "";
  }

  // --- pickers ---
  async function loadPickers() {
    const [m, ex] = await Promise.all([
      fetch("/api/models").then((r) => r.json()),
      fetch("/api/examples").then((r) => r.json()),
    ]);
    modelSel.innerHTML = "";
    modelSel.append(h("option", { value: "" }, "default for the arch"));
    for (const x of m.models) {
      modelSel.append(h("option", { value: x.name, title: x.description }, x.name));
    }
    for (const a of m.aliases) {
      modelSel.append(h("option", { value: a.alias, title: `alias of ${a.target}` }, `${a.alias} (= ${a.target})`));
    }
    const ops = h("optgroup", { label: "operational (step view)" });
    for (const x of m.operational || []) {
      operational.add(x.name);
      ops.append(h("option", { value: x.name, title: x.description }, x.name));
    }
    if (ops.children.length) modelSel.append(ops);
    defaults = m.defaults || {};
    examples = ex.examples;
    exampleSel.innerHTML = "";
    exampleSel.append(h("option", { value: "" }, "— pick an example —"));
    const groups = new Map();
    examples.forEach((e, i) => {
      if (!groups.has(e.group)) {
        const g = h("optgroup", { label: e.group });
        groups.set(e.group, g);
        exampleSel.append(g);
      }
      groups.get(e.group).append(h("option", { value: String(i) }, e.name));
    });
  }

  function loadExample(i) {
    const e = examples[i];
    if (!e) return;
    editor.set(e.source);
    modelSel.value = e.model;
    catText.value = "";
    exampleSel.value = String(i);
    // The results shown were another test's.
    results.innerHTML = "";
    results.append(h("p", { class: "hint" }, `${e.name}: press Run to check it under ${e.model}.`));
    syncStep([]);
  }

  // --- step view: shown when the chosen model is operational ---
  function chosenModel() {
    if (modelSel.value) return modelSel.value;
    const arch = (editor.get().trim().split(/\s+/)[0] || "").toUpperCase();
    return defaults[arch] || "";
  }
  // Shows the step view at `picks` (or, when null, where it was if the test
  // and model are unchanged, else the initial state); hides it otherwise.
  function syncStep(picks) {
    if (catText.value.trim() || !operational.has(chosenModel())) {
      stepKey = null;
      stepper.hide();
      return;
    }
    const key = modelSel.value + "\u0000" + editor.get();
    if (picks === null) {
      // Run on the same test and model keeps the steps taken.
      if (key === stepKey && stepper.visible()) return;
      picks = [];
    }
    stepKey = key;
    stepper.show(picks);
  }

  // --- run ---
  async function run() {
    if (running) return;
    running = true;
    $("run").disabled = true;
    setStatus("Running…");
    const body = { source: editor.get(), why: whyBox.checked, graphs: true };
    if (catText.value.trim()) body.cat = catText.value;
    else if (modelSel.value) body.model = modelSel.value;
    const t0 = performance.now();
    syncStep(null);
    try {
      const r = await fetch("/api/run", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      let data;
      try {
        data = await r.json();
      } catch (e) {
        data = { error: `the server answered ${r.status} without JSON` };
      }
      const ms = (performance.now() - t0).toFixed(0);
      if (!r.ok || data.error) {
        showError(data);
        setStatus(`Error (${r.status}) after ${ms} ms`, true);
      } else {
        showResult(data);
        setStatus(`${data.test} under ${data.model}: ${data.verdict} in ${ms} ms`);
      }
    } catch (e) {
      showError({ error: `cannot reach the server: ${e}` });
      setStatus("Network error", true);
    } finally {
      running = false;
      $("run").disabled = false;
    }
  }

  function showError(data) {
    results.innerHTML = "";
    const box = h("div", { class: "error", id: "error" },
      h("h2", {}, data.limit ? `Limit exceeded (${data.limit})` : "Error"),
      h("pre", {}, data.error || "unknown error"));
    results.append(box);
    if (data.line && data.file !== "model.cat") editor.markLine(data.line, data.col);
  }

  function showResult(d) {
    results.innerHTML = "";
    const ok = d.verdict === "Ok";
    const asked = d.positive > 0;
    const quant = /^\s*~exists/.test(d.condition) ? "~exists" : /^\s*forall/.test(d.condition) ? "forall" : "exists";
    let sentence;
    if (quant === "forall") {
      sentence = d.negative === 0 ? "every allowed execution satisfies the proposition" : "some allowed execution violates the proposition";
    } else {
      sentence = asked ? "the outcome the condition names is allowed" : "the outcome the condition names is forbidden";
    }
    results.append(h("div", { class: "verdict " + (ok ? "ok" : "no"), id: "verdict" },
      h("div", { class: "verdict-word" }, d.verdict),
      h("div", { class: "verdict-text" },
        h("div", { class: "test-name" }, `${d.test} — model ${d.model}`),
        h("code", { class: "condition" }, d.condition),
        h("div", {}, `${sentence}; condition ${ok ? "validated" : "not validated"} (Positive ${d.positive}, Negative ${d.negative}).`))));
    if (d.undefined) {
      results.append(h("div", { class: "flags" },
        `Undefined behaviour flagged by the model: ${d.flags.join(", ")}. A program that races proves nothing.`));
    }
    // Outcome table.
    const table = h("table", { class: "outcomes", id: "outcomes" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "final state"), h("th", {}, "condition"), h("th", {}, "executions"), h("th", {}, "why"))));
    const tbody = h("tbody");
    d.states.forEach((s, i) => {
      const sat = d.states_satisfy ? d.states_satisfy[i] : null;
      tbody.append(h("tr", { class: "allowed" },
        h("td", { class: "mark", title: "allowed" }, "✓ allowed"),
        h("td", {}, h("code", {}, s.state)),
        h("td", { class: "sat" }, sat === null ? "" : sat ? "matches" : ""),
        h("td", { class: "count" }, s.count),
        h("td", {}, whyAllowed(d, s.state))));
    });
    d.forbidden.forEach((f) => {
      tbody.append(h("tr", { class: "forbidden" },
        h("td", { class: "mark", title: "forbidden" }, "✗ forbidden"),
        h("td", {}, h("code", {}, f.state)),
        h("td", { class: "sat" }, "matches"),
        h("td", { class: "count" }, "0"),
        h("td", {}, `axiom ${f.axiom}`)));
    });
    table.append(tbody);
    results.append(h("h2", {}, "Outcomes"), table);
    const judged = operational.has(d.model) ? "machine states explored" : "candidate executions judged";
    results.append(h("p", { class: "meta" },
      `${d.candidates} ${judged} in ${Number(d.time_ms).toFixed(2)} ms` +
      (d.cut_paths ? `; ${d.cut_paths} thread paths cut by the unroll bound` : "") +
      (d.cyclic_discarded ? `; ${d.cyclic_discarded} out-of-thin-air choices discarded` : "")));
    if (d.why_text) {
      results.append(h("h2", {}, "Why"), h("pre", { class: "why", id: "why-text" }, d.why_text));
    } else if (whyBox.checked && d.forbidden.length === 0 && d.allowed_why.length === 0 && !operational.has(d.model)) {
      results.append(h("p", { class: "meta" }, "Why: nothing to explain (no outcome the condition names is forbidden, and the model names no reason for the allowed ones)."));
    }
    const exs = d.executions || [];
    if (exs.length > 0) {
      results.append(h("h2", {}, "Executions"));
      const list = h("div", { class: "graphs", id: "graphs" });
      exs.forEach((ex) => {
        const label = { witness: "Witness", forbidden: "Forbidden", trace: "Trace" }[ex.kind] || "Allowed, with a reason";
        const fig = h("figure", { class: "graph " + ex.kind },
          h("figcaption", {}, h("b", {}, label),
            ` — ${ex.title}`, h("br"), h("code", {}, ex.state)));
        if (ex.kind === "trace") {
          // An operational witness: the transitions reaching the outcome.
          fig.append(h("ol", { class: "trace" }, ...(ex.steps || []).map((s) => h("li", {}, s))),
            h("details", {}, h("summary", {}, "DOT (order constraints)"), h("pre", {}, ex.dot)));
          list.append(fig);
          return;
        }
        const wrap = h("div", { class: "svg-wrap" });
        wrap.append(LitmixGraph.render(ex));
        fig.append(wrap, LitmixGraph.legend(ex), h("details", {}, h("summary", {}, "DOT"), h("pre", {}, ex.dot)));
        list.append(fig);
      });
      results.append(list);
    } else if (operational.has(d.model)) {
      results.append(h("p", { class: "meta" }, "An operational model: walk its machine in the step view below."));
    } else {
      results.append(h("p", { class: "meta" }, "No execution to draw: no allowed execution matches the condition" + (whyBox.checked ? " and none is forbidden with an explanation." : " (tick 'why' to see forbidden ones).")));
    }
  }

  function whyAllowed(d, state) {
    const a = (d.allowed_why || []).find((x) => x.state === state);
    return a ? a.reasons.map((r) => r.reason).join(", ") : "";
  }

  // --- wiring ---
  $("run").addEventListener("click", run);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  exampleSel.addEventListener("change", () => {
    if (exampleSel.value !== "") loadExample(Number(exampleSel.value));
  });
  modelSel.addEventListener("change", () => syncStep([]));
  editor.onChange(() => { exampleSel.value = ""; });
  $("share").addEventListener("click", async () => {
    const frag = linkFragment();
    history.replaceState(null, "", frag);
    try {
      await navigator.clipboard.writeText(location.href);
      setStatus("Link copied: it holds the test and the model.");
    } catch (e) {
      setStatus("The address bar now holds the link (test and model).");
    }
  });

  loadPickers().then(() => {
    const f = readFragment();
    if (f && f.test !== null) {
      editor.set(f.test);
      modelSel.value = f.model;
      catText.value = f.cat;
      const same = examples.findIndex((e) => e.source === f.test);
      if (same >= 0) exampleSel.value = String(same);
      syncStep(f.picks);
      run();
    } else if (f && f.example) {
      const i = examples.findIndex((e) => e.name === f.example);
      if (i >= 0) loadExample(i);
    } else {
      loadExample(0);
    }
    document.body.dataset.ready = "true";
  }).catch((e) => setStatus(`Cannot load the examples: ${e}`, true));
})();
