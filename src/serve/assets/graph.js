// litmix playground: executions drawn as SVG, laid out in the page.
//
// A simple layered layout: init writes in a row on top, one column per
// thread, events in program order down the column. Edges are the base
// relations the server sends (po, rf, co, fr, rmw, ...) coloured as in
// `litmix run --dot`, plus the steps of a violated axiom's cycle (or of a
// `why_` reason) drawn bold crimson and labelled by their relation.
"use strict";

const LitmixGraph = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = { po: "black", rf: "red", co: "blue", fr: "darkorange", rmw: "purple" };
  const OTHER = "#666666";
  const CYCLE = "crimson";
  const NODE_W = 190, NODE_H = 46, COL_GAP = 80, ROW_GAP = 54, MARGIN = 30, TOP_LABEL = 22;
  const INIT_W = 120, INIT_GAP = 24;

  function colour(rel) {
    return COLOURS[rel] || OTHER;
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Positions: {x, y} of each event's box (top-left corner).
  function layout(events) {
    const threads = [...new Set(events.filter((e) => e.thread !== null).map((e) => e.thread))]
      .sort((a, b) => a - b);
    const inits = events.map((e, i) => i).filter((i) => events[i].thread === null);
    const pos = new Array(events.length);
    const colX = (c) => MARGIN + c * (NODE_W + COL_GAP);
    let top = MARGIN + TOP_LABEL;
    inits.forEach((i, k) => { pos[i] = { x: MARGIN + k * (INIT_W + INIT_GAP), y: top, w: INIT_W }; });
    if (inits.length > 0) top += NODE_H + ROW_GAP + TOP_LABEL;
    const columnOf = new Map(threads.map((t, c) => [t, c]));
    const rowOf = new Map();
    events.forEach((e, i) => {
      if (e.thread === null) return;
      const c = columnOf.get(e.thread);
      const r = rowOf.get(c) || 0;
      rowOf.set(c, r + 1);
      pos[i] = { x: colX(c), y: top + r * (NODE_H + ROW_GAP), col: c, row: r };
    });
    const rows = Math.max(0, ...rowOf.values());
    const width = MARGIN * 2 + Math.max(inits.length * (INIT_W + INIT_GAP) - INIT_GAP,
      Math.max(threads.length, 1) * (NODE_W + COL_GAP) - COL_GAP);
    const height = top + rows * (NODE_H + ROW_GAP) - ROW_GAP + MARGIN + 10;
    return { pos, threads, columnOf, top, width, height, hasInit: inits.length > 0 };
  }

  // The point where the segment from the centre of box b towards (tx, ty) leaves the box.
  function width(b) {
    return b.w || NODE_W;
  }

  function border(b, tx, ty) {
    const cx = b.x + width(b) / 2, cy = b.y + NODE_H / 2;
    const dx = tx - cx, dy = ty - cy;
    if (dx === 0 && dy === 0) return { x: cx, y: cy };
    const sx = Math.abs(dx) > 0 ? (width(b) / 2) / Math.abs(dx) : Infinity;
    const sy = Math.abs(dy) > 0 ? (NODE_H / 2) / Math.abs(dy) : Infinity;
    const s = Math.min(sx, sy);
    return { x: cx + dx * s, y: cy + dy * s };
  }

  function marker(defs, id, fill) {
    const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    m.appendChild(el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill }));
    defs.appendChild(m);
  }

  let unique = 0;

  // Draws one execution ({events, edges, cycle, title}) as an <svg>.
  function render(ex) {
    const id = `g${++unique}`;
    const L = layout(ex.events);
    const svg = el("svg", { xmlns: NS, class: "execution", width: L.width, height: L.height,
      viewBox: `0 0 ${L.width} ${L.height}`, role: "img", "aria-label": ex.title || "execution" });
    svg.appendChild(el("title", {}, ex.title || "execution"));
    const defs = el("defs");
    svg.appendChild(defs);
    const used = new Set();
    const markerFor = (c) => {
      const mid = `${id}-${c.replace(/[^a-z0-9]/gi, "")}`;
      if (!used.has(mid)) { used.add(mid); marker(defs, mid, c); }
      return `url(#${mid})`;
    };
    // Column captions.
    if (L.hasInit) svg.appendChild(el("text", { x: MARGIN, y: MARGIN + 12, class: "caption" }, "init"));
    L.threads.forEach((t, c) => {
      svg.appendChild(el("text", { x: MARGIN + c * (NODE_W + COL_GAP), y: L.top - 8, class: "caption" }, `P${t}`));
    });
    const onCycle = new Set();
    (ex.cycle || []).forEach((s) => { onCycle.add(s.from); onCycle.add(s.to); });
    const edgeLayer = el("g", { class: "edges" });
    const labelLayer = el("g", { class: "labels" });
    // Nodes.
    const nodeLayer = el("g", { class: "nodes" });
    ex.events.forEach((e, i) => {
      const p = L.pos[i];
      const g = el("g", { class: "node" + (onCycle.has(i) ? " on-cycle" : ""), "data-event": e.name });
      g.appendChild(el("title", {}, `${e.name}: ${e.label}`));
      g.appendChild(el("rect", { x: p.x, y: p.y, width: width(p), height: NODE_H, rx: 6 }));
      const what = e.loc ? `${e.kind} ${e.loc}${e.value !== null ? "=" + e.value : ""}` : e.kind;
      g.appendChild(el("text", { x: p.x + 8, y: p.y + 18, class: "ev" }, `${e.name}: ${what}`));
      g.appendChild(el("text", { x: p.x + 8, y: p.y + 36, class: "instr" },
        e.thread === null ? "init" : clip(e.instr, 28)));
      nodeLayer.appendChild(g);
    });
    // Edges: a cycle step that is a base edge marks that edge; other steps
    // (derived relations) get edges of their own. Parallel edges get bends
    // of their own.
    const steps = (ex.edges || []).map((e) => ({ ...e, colour: colour(e.rel), cycle: false }));
    (ex.cycle || []).forEach((c) => {
      const base = steps.find((s) => !s.cycle && s.from === c.from && s.to === c.to && s.rel === c.rel);
      if (base) {
        base.cycle = true;
        base.colour = CYCLE;
      } else {
        steps.push({ ...c, colour: CYCLE, cycle: true });
      }
    });
    const seen = new Map();
    steps.forEach((s) => {
      const a = L.pos[s.from], b = L.pos[s.to];
      if (!a || !b) return;
      const key = s.from < s.to ? `${s.from}-${s.to}` : `${s.to}-${s.from}`;
      const k = seen.get(key) || 0;
      seen.set(key, k + 1);
      drawEdge(edgeLayer, labelLayer, s, a, b, k, markerFor(s.colour));
    });
    svg.append(edgeLayer, nodeLayer, labelLayer);
    return svg;
  }

  function clip(s, n) {
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }

  function drawEdge(edges, labels, s, a, b, k, markerUrl) {
    const acx = a.x + width(a) / 2, acy = a.y + NODE_H / 2;
    const bcx = b.x + width(b) / 2, bcy = b.y + NODE_H / 2;
    const sameColumn = a.x === b.x && a.y !== b.y;
    const adjacent = sameColumn && Math.abs(a.y - b.y) <= NODE_H + ROW_GAP;
    let d, lx, ly;
    if (s.from === s.to) {
      // A loop (irreflexive failure) on the box's right side.
      const x = a.x + width(a), y = acy;
      d = `M ${x} ${y - 10} C ${x + 50} ${y - 40}, ${x + 50} ${y + 40}, ${x} ${y + 10}`;
      lx = x + 42; ly = y;
    } else if (adjacent && k === 0 && s.rel === "po") {
      const down = b.y > a.y;
      const p = { x: acx - 30, y: down ? a.y + NODE_H : a.y };
      const q = { x: bcx - 30, y: down ? b.y : b.y + NODE_H };
      d = `M ${p.x} ${p.y} L ${q.x} ${q.y}`;
      lx = p.x - 14; ly = (p.y + q.y) / 2 + 4;
    } else if (sameColumn) {
      // Arc out to the right side of the column, wider for longer jumps.
      const side = 1;
      const p = { x: a.x + width(a), y: acy + (b.y > a.y ? 8 : -8) };
      const q = { x: b.x + width(b), y: bcy + (b.y > a.y ? -8 : 8) };
      const bulge = 40 + 22 * k + Math.abs(a.y - b.y) * 0.12;
      const cx = p.x + side * bulge * 2, cy = (p.y + q.y) / 2;
      d = `M ${p.x} ${p.y} Q ${cx} ${cy} ${q.x} ${q.y}`;
      lx = (p.x + 2 * cx + q.x) / 4 + 4; ly = (p.y + 2 * cy + q.y) / 4 + 4;
    } else {
      const p = border(a, bcx, bcy), q = border(b, acx, acy);
      const mx = (p.x + q.x) / 2, my = (p.y + q.y) / 2;
      const dx = q.x - p.x, dy = q.y - p.y, len = Math.hypot(dx, dy) || 1;
      const bend = (k % 2 === 0 ? 1 : -1) * (14 + 20 * Math.ceil(k / 2)) * (s.from < s.to ? 1 : -1);
      const cx = mx - (dy / len) * bend, cy = my + (dx / len) * bend;
      d = `M ${p.x} ${p.y} Q ${cx} ${cy} ${q.x} ${q.y}`;
      lx = (p.x + 2 * cx + q.x) / 4; ly = (p.y + 2 * cy + q.y) / 4;
    }
    const path = el("path", { d, fill: "none", stroke: s.colour, "stroke-width": s.cycle ? 2.5 : 1.4,
      "marker-end": markerUrl, class: `edge rel-${s.rel.replace(/[^\w-]/g, "_")}` + (s.cycle ? " cycle" : "") });
    if (s.cycle) path.setAttribute("stroke-dasharray", "7 4");
    path.appendChild(el("title", {}, `${s.rel}`));
    edges.appendChild(path);
    labels.appendChild(el("text", { x: lx, y: ly, fill: s.colour, class: "edge-label" + (s.cycle ? " cycle" : ""),
      "text-anchor": "middle" }, s.rel));
  }

  // A legend of the relations present, as an HTML element.
  function legend(ex) {
    const rels = [...new Set((ex.edges || []).map((e) => e.rel))];
    const div = document.createElement("div");
    div.className = "legend";
    rels.forEach((r) => {
      const s = document.createElement("span");
      s.style.color = colour(r);
      s.textContent = `— ${r}`;
      div.appendChild(s);
    });
    if ((ex.cycle || []).length > 0) {
      const s = document.createElement("span");
      s.style.color = CYCLE;
      s.textContent = ex.kind === "forbidden" ? "- - cycle of the violated axiom" : "- - reason";
      div.appendChild(s);
    }
    return div;
  }

  return { render, legend, layout, colour };
})();
