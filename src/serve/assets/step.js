// litmix playground: the step view of operational models (LOST-POP, the
// GPU cache machine). The server replays the picks over the machine
// (POST /api/step, the call `litmix step --replay` makes) and answers the
// state view; this file draws it: the state (summary lines, threads with
// their requests or instructions, order constraints), the transitions
// taken, the enabled transitions as buttons, Undo and Reset.
"use strict";

const LitmixStep = (() => {
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  // `box` receives the panel; `request()` gives {source, model} now.
  function create(box, request) {
    let picks = [];
    let busy = false;
    let onPicks = () => {};

    async function load(next) {
      if (busy) return;
      busy = true;
      box.classList.add("busy");
      const { source, model } = request();
      const body = { source, picks: next };
      if (model) body.model = model;
      let data;
      let status = 0;
      try {
        const r = await fetch("/api/step", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
        status = r.status;
        data = await r.json().catch(() => ({ error: `the server answered ${r.status} without JSON` }));
      } catch (e) {
        data = { error: `cannot reach the server: ${e}` };
      }
      busy = false;
      box.classList.remove("busy");
      if (status === 200 && !data.error) {
        picks = data.picks;
        draw(data);
        onPicks(picks);
      } else if (Array.isArray(data.valid_picks) && data.valid_picks.length < next.length) {
        // A pick no longer enabled (an edited test, an old link): keep
        // the good prefix and say why.
        const why = data.error;
        await load(data.valid_picks);
        showError(why);
      } else {
        drawError(data);
      }
    }

    function showError(text) {
      const old = box.querySelector(".step-error");
      if (old) old.remove();
      box.querySelector(".step-head").after(h("div", { class: "step-error error" }, h("pre", {}, text)));
    }

    function head(model, test) {
      const undo = h("button", { class: "secondary", id: "step-undo", title: "Take back the last transition" }, "Undo");
      const reset = h("button", { class: "secondary", id: "step-reset", title: "Back to the initial state" }, "Reset");
      undo.disabled = picks.length === 0;
      reset.disabled = picks.length === 0;
      undo.addEventListener("click", () => load(picks.slice(0, -1)));
      reset.addEventListener("click", () => load([]));
      return h("div", { class: "step-head" },
        h("h2", {}, `Step through ${model}`, test ? h("span", { class: "meta" }, ` — ${test}`) : null),
        h("span", { class: "step-count", id: "step-count" }, `${picks.length} step${picks.length === 1 ? "" : "s"} taken`),
        undo, reset);
    }

    function drawError(data) {
      box.innerHTML = "";
      box.append(head(request().model || "the machine", ""));
      showError(data.error || "unknown error");
    }

    function draw(d) {
      const v = d.view;
      box.innerHTML = "";
      box.append(head(d.model, d.test));
      // Transitions taken so far.
      const hist = h("ol", { class: "step-history", id: "step-history" });
      d.history.forEach((label, i) => hist.append(h("li", {}, h("code", {}, label), h("span", { class: "meta" }, ` [${d.picks[i]}]`))));
      box.append(h("details", { class: "history", open: "" },
        h("summary", {}, `Transitions taken (${d.history.length})`),
        d.history.length ? hist : h("p", { class: "meta", id: "step-history" }, "none yet: the initial state")));
      // The state.
      const state = h("div", { class: "step-state", id: "step-state" });
      if (v.summary.length) state.append(h("pre", { class: "step-summary", id: "step-summary" }, v.summary.join("\n")));
      const threads = h("div", { class: "step-threads" });
      for (const t of v.threads) {
        const items = h("ul", { class: "items" });
        for (const it of t.items) {
          const text = it.text.startsWith(it.id) ? it.text : `${it.id} ${it.text}`;
          items.append(h("li", { class: it.detail === "done" ? "done" : "" },
            h("code", {}, text), it.detail ? h("span", { class: "detail" }, ` ${it.detail}`) : null));
        }
        threads.append(h("div", { class: "step-thread" },
          h("div", { class: "thread-name" }, `${t.name} `, h("span", { class: "meta" }, `(${t.arch})`)),
          ...t.info.map((line) => h("div", { class: "info" }, line)),
          t.items.length ? items : null));
      }
      state.append(threads);
      if (v.constraints.length) {
        const cs = v.constraints.map((c) => c.scope ? `${c.from} → ${c.to} @${c.scope}` : `${c.from} → ${c.to}`);
        state.append(h("div", { class: "constraints", id: "step-constraints" }, h("b", {}, "order: "), h("code", {}, cs.join(", "))));
      }
      if (v.outcome) {
        state.append(h("div", { class: "final", id: "step-final" }, h("b", {}, "final: "), h("code", {}, v.outcome.join("; "))));
      }
      box.append(state);
      // Enabled transitions: one button each.
      const list = h("div", { class: "transitions", id: "step-transitions" });
      if (v.transitions.length === 0) {
        list.append(h("p", { class: "meta" }, v.outcome ? "No transition enabled: a final state." : "No transition enabled: the machine is stuck here."));
      }
      for (const t of v.transitions) {
        const b = h("button", { class: "pick secondary", "data-index": String(t.index), title: `take transition ${t.index}` },
          h("span", { class: "index" }, `[${t.index}]`), ` ${t.label}`);
        b.addEventListener("click", () => load(picks.concat([t.index])));
        list.append(b);
      }
      box.append(h("h3", {}, `Enabled transitions (${v.transitions.length})`), list);
      box.append(h("details", {}, h("summary", {}, "as `litmix step` prints it"), h("pre", { class: "step-text" }, d.text)));
    }

    return {
      show(next) {
        box.hidden = false;
        return load(next || []);
      },
      hide() {
        box.hidden = true;
        box.innerHTML = "";
        picks = [];
        onPicks(picks);
      },
      visible() {
        return !box.hidden;
      },
      picks() {
        return picks.slice();
      },
      onPicks(f) {
        onPicks = f;
      },
    };
  }

  return { create, h };
})();
