// Shared by every live explorer (prepended to each explorer's module by attn/widgets/live.py).
// An explorer module defines `const EXPLORER = {build, apply?, compute, draw, describe}`; `render` below
// builds the controls from the declaration Python sends (spec.controls), keeps the state, and on each
// input computes, redraws and only then tells Python (model.save_changes), so the picture never waits
// for a kernel. In a static page there is no kernel: saving fails once and is not tried again.
const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function html(tag, attrs = {}, parent = null, text = null) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== null) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// A linear map from data to pixels: scale(lo, hi, a, b)(x).
function scale(lo, hi, a, b) {
  const f = x => a + (x - lo) * (b - a) / (hi - lo);
  f.invert = p => lo + (p - a) * (hi - lo) / (b - a);
  f.range = [a, b];
  return f;
}

// A number shown on the page: rounded for the eye, exact in data-value (shortest round-trip decimal).
function setNum(el, value, digits) {
  el.textContent = fmt(value, digits);
  el.dataset.value = String(value);
}

// A number to `digits` significant digits, written as Python's format(value, ".3g") writes it (no
// trailing zeros): the one format of a log-scale control's value (τ) in its readout, the titles and the text.
function sig(value, digits = 3) {
  return String(Number(value.toPrecision(digits)));
}

function fmt(value, digits) {
  const s = value.toFixed(digits);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

// --- the mathematics (float64, the same operations as attn.softmax and attn.scores) -----------------
function dot(a, b) { let s = 0; for (let i = 0; i < a.length; i++) s += a[i] * b[i]; return s; }

function softmax(x, tau = 1) {
  const m = Math.max(...x);
  const e = x.map(v => Math.exp((v - m) / tau));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map(v => v / z);
}

function entropy(w) { return -w.reduce((h, p) => h + (p > 0 ? p * Math.log(p) : 0), 0); }

function matmul(A, B) { // (n, m) @ (m, p) -> (n, p)
  return A.map(row => B[0].map((_, j) => row.reduce((s, a, k) => s + a * B[k][j], 0)));
}

// attention for a block of queries: softmax(Q Kᵀ / √d_k / τ) V, row by row
function attention(Q, K, V, tau = 1) {
  const c = 1 / Math.sqrt(K[0].length);
  const S = Q.map(q => K.map(k => dot(q, k) * c));  // (T_q, d_k) @ (d_k, T_k) -> (T_q, T_k)
  const W = S.map(s => softmax(s, tau));
  const O = W.map(w => V[0].map((_, j) => w.reduce((acc, wi, i) => acc + wi * V[i][j], 0)));  // (T_q, T_k) @ (T_k, d_v)
  return {S, W, O};
}

// --- controls from the declaration ---------------------------------------------------------------
let _uid = 0;
function uid(prefix) { _uid += 1; return `${prefix}-${Date.now().toString(36)}-${_uid}`; }

function controlValue(c, input) {
  if (c.kind === "log") return Math.pow(10, Number(input.value));
  if (c.kind === "range") return Number(input.value);
  const o = c.options[Number(input.value)];
  return o[1];
}

function controlPosition(c, value) {
  if (c.kind === "log") return Math.log10(value);
  if (c.kind === "range") return value;
  return Math.max(0, c.options.findIndex(o => o[1] === value));
}

function controlText(c, value) {
  if (c.kind === "choice") return String(c.options[Math.max(0, c.options.findIndex(o => o[1] === value))][0]);
  return c.kind === "log" ? sig(value, 3) : fmt(value, c.digits ?? 1);
}

function buildControls(spec, state, box, onInput) {
  const inputs = {};
  for (const c of spec.controls) {
    const id = uid("attn-ctl");
    const row = html("div", {class: "attn-control"}, box);
    html("label", {for: id}, row, c.label);
    let input;
    if (c.kind === "choice" && !c.ordered) {  // options to pick from: a drop-down list
      input = html("select", {id}, row);
      c.options.forEach((o, i) => html("option", {value: i}, input, o[0]));
    } else if (c.kind === "choice") {  // options along a scale (d_k, T): a slider over their positions
      input = html("input", {id, type: "range", min: 0, max: c.options.length - 1, step: 1}, row);
    } else {
      input = html("input", {id, type: "range", min: c.min, max: c.max, step: c.step}, row);
    }
    input.dataset.name = c.name;
    const out = html("output", {for: id, "aria-hidden": "true"}, row);
    inputs[c.name] = {input, out, c};
    input.addEventListener("input", () => onInput(c.name, controlValue(c, input)));
    input.addEventListener("keydown", keepKeys);
  }
  return inputs;
}

function syncControls(inputs, state, disabled = {}) {
  for (const {input, out, c} of Object.values(inputs)) {
    const v = state[c.name];
    const pos = controlPosition(c, v);
    if (c.kind === "choice") { if (Number(input.value) !== pos) input.value = String(pos); }
    else if (Math.abs(Number(input.value) - pos) > 1e-9) input.value = String(pos);
    out.textContent = controlText(c, v);
    if (input.tagName === "INPUT") input.setAttribute("aria-valuetext", `${c.label} ${controlText(c, v)}`);
    input.disabled = !!disabled[c.name];
  }
}

// Keys that move a control belong to it: in JupyterLab the notebook would otherwise take them (and cancel
// the slider's own move) when they bubble up to it.
const CONTROL_KEYS = new Set(["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End"]);
function keepKeys(ev) { if (CONTROL_KEYS.has(ev.key)) ev.stopPropagation(); }

// --- the widget ------------------------------------------------------------------------------------
function render({model, el}) {
  const spec = model.get("spec");
  let state = {...model.get("state")};
  let live = true;  // a kernel is listening (JupyterLab); false after the first failed save (static page)
  const root = html("div", {class: "attn-explorer", "data-explorer": spec.name}, el);
  root.attnData = spec.data;  // for the browser tests, which compare the page's numbers with attn
  // In JupyterLab, keys pressed on the controls are the controls' own (arrow keys move a slider), not
  // notebook shortcuts: Lumino skips keyboard shortcuts inside an element marked so.
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  root.setAttribute("data-p-suppress-shortcuts", "true");
  const controls = html("div", {class: "attn-controls", role: "group", "aria-label": `${spec.title}: controls`}, root);
  const figure = html("figure", {class: "attn-figure"}, root);
  const descId = uid("attn-desc");
  const picture = svg("svg", {viewBox: `0 0 ${spec.width} ${spec.height}`, role: "img", "aria-labelledby": descId,
                              class: "attn-svg"}, figure);
  const caption = html("figcaption", {id: descId, class: "attn-alt", "aria-live": "polite"}, figure);
  const numbers = html("div", {class: "attn-numbers"}, root);
  const ctx = {spec, data: spec.data, svg: picture, numbers, root, set: (changes) => change(changes)};
  EXPLORER.build(ctx);
  if (picture.querySelector(".attn-handle")) {  // draggable points inside: a group of controls, not an image
    picture.setAttribute("role", "group");
    picture.setAttribute("aria-label", `${spec.title}: the picture (its points can be dragged)`);
    picture.removeAttribute("aria-labelledby");
    picture.setAttribute("aria-describedby", descId);
  }
  const inputs = buildControls(spec, state, controls, (name, value) => change({[name]: value}));
  let serial = 0;

  function show() {
    const result = EXPLORER.compute(state, spec.data);
    EXPLORER.draw(ctx, state, result);
    syncControls(inputs, state, EXPLORER.disabled ? EXPLORER.disabled(state) : {});
    caption.textContent = EXPLORER.describe(state, result, spec.data);
    root.dataset.state = JSON.stringify(state);
    return result;
  }

  function change(changes) {
    const t0 = performance.now();
    state = EXPLORER.apply ? EXPLORER.apply({...state}, changes, spec.data) : {...state, ...changes};
    show();
    root.dataset.handlerMs = String(performance.now() - t0);  // compute + DOM update, read by bin/bench
    serial += 1;
    root.dataset.serial = String(serial);
    if (live) {  // after the picture: Python learns the new state (and recomputes it with attn)
      try {
        model.set("state", {...state, serial});
        model.save_changes();
      } catch (e) { live = false; }
    }
  }

  model.on("change:state", () => {  // Python changed the state (explorer.update): follow it
    const s = model.get("state");
    if (s.serial === serial) return;  // our own echo
    state = {...s};
    show();
  });
  model.on("change:seen", () => { root.dataset.seen = String(model.get("seen")); });
  show();
}

// Pointer and keyboard dragging of a point in an SVG: onMove(x, y) in data coordinates.
function draggable(node, sx, sy, onMove, svgRoot, keyStep = 0.1) {
  node.setAttribute("tabindex", "0");
  // a 2-D point as an ARIA slider: its value is the x coordinate, its text both coordinates (setPoint)
  const [lo, hi] = [sx.invert(Math.min(...sx.range)), sx.invert(Math.max(...sx.range))];
  node.setAttribute("aria-valuemin", fmt(Math.min(lo, hi), 1));
  node.setAttribute("aria-valuemax", fmt(Math.max(lo, hi), 1));
  node.classList.add("attn-handle");
  const toData = ev => {
    const pt = svgRoot.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    const p = pt.matrixTransform(svgRoot.getScreenCTM().inverse());
    return [sx.invert(p.x), sy.invert(p.y)];
  };
  node.addEventListener("pointerdown", ev => {
    ev.preventDefault();
    node.setPointerCapture(ev.pointerId);
    node.focus();
    const move = e => onMove(...toData(e));
    const up = () => { node.removeEventListener("pointermove", move); node.removeEventListener("pointerup", up); };
    node.addEventListener("pointermove", move);
    node.addEventListener("pointerup", up);
  });
  node.addEventListener("keydown", ev => {
    const d = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1]}[ev.key];
    if (!d) return;
    ev.preventDefault();
    ev.stopPropagation();
    const step = ev.shiftKey ? 5 * keyStep : keyStep;
    onMove(null, null, d[0] * step, d[1] * step);
  });
}

function clampRound(v, lo, hi, step = 0.01) {
  return Math.round(Math.min(hi, Math.max(lo, v)) / step) * step;
}

// An axis line with ticks and labels; `ticks` in data units.
function axis(g, s, ticks, {x = true, at = 0, label = null, fmtTick = t => String(t)} = {}) {
  for (const t of ticks) {
    if (x) {
      svg("line", {x1: s(t), x2: s(t), y1: at, y2: at + 4, class: "attn-axis"}, g);
      svg("text", {x: s(t), y: at + 14, "text-anchor": "middle", class: "attn-tick"}, g).textContent = fmtTick(t);
    } else {
      svg("line", {x1: at - 4, x2: at, y1: s(t), y2: s(t), class: "attn-axis"}, g);
      svg("text", {x: at - 6, y: s(t) + 3, "text-anchor": "end", class: "attn-tick"}, g).textContent = fmtTick(t);
    }
  }
}

// Arrowheads, one marker per colour, with ids unique to this widget (a page may show several).
function arrowMarkers(svgRoot, colours) {
  const defs = svg("defs", {}, svgRoot);
  const ids = {};
  for (const c of colours) {
    const id = uid("attn-arrow");
    const m = svg("marker", {id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 5, markerHeight: 5,
                             orient: "auto-start-reverse"}, defs);
    svg("path", {d: "M0,0 L10,5 L0,10 z", fill: c}, m);
    ids[c] = id;
  }
  return ids;
}

// The weights panel of Propositions 1 and 2 (x 350 to 580, y 40 to 250): one horizontal bar per key k_j on
// [0, xMax], its value beside it (data-name from dataName(j), if given). Returns {bx, title, bars}.
function weightPanel(root, colours, xMax, xLabel, dataName = null) {
  const bx = scale(0, xMax, 350, 580);
  const g = svg("g", {}, root);
  const title = panelTitle(g, 465, 18, "");
  svg("line", {x1: bx(0), x2: bx(0), y1: 40, y2: 250, class: "attn-axis"}, g);
  svg("line", {x1: bx(0), x2: bx(xMax), y1: 250, y2: 250, class: "attn-axis"}, g);
  axis(g, bx, [0, 0.25, 0.5, 0.75, 1], {at: 250});
  svg("text", {x: 465, y: 285, "text-anchor": "middle", class: "attn-tick"}, g).textContent = xLabel;
  const bars = colours.map((c, j) => {
    const y = 50 + j * 50;
    svg("text", {x: bx(0) - 6, y: y + 20, "text-anchor": "end", class: "attn-label"}, g).textContent = `k${j + 1}`;
    const text = svg("text", {y: y + 21, class: "attn-tick"}, g);
    if (dataName) text.dataset.name = dataName(j);
    return {rect: svg("rect", {x: bx(0), y, height: 32, fill: c}, g), text};
  });
  return {bx, title, bars};
}

// Bars of a weightPanel set to the weights w (one per key).
function setWeights(panel, w) {
  const bx = panel.bx;
  w.forEach((wj, j) => {
    const b = panel.bars[j];
    b.rect.setAttribute("width", Math.max(0, bx(wj) - bx(0)));
    b.text.setAttribute("x", bx(wj) + 4);
    setNum(b.text, wj, 2);
  });
}

function panelTitle(g, x, y, text) {
  const t = svg("text", {x, y, "text-anchor": "middle", class: "attn-title"}, g);
  t.textContent = text;
  return t;
}

function starPath(r) {
  const pts = [];
  for (let i = 0; i < 10; i++) {
    const a = -Math.PI / 2 + i * Math.PI / 5, rr = i % 2 ? r * 0.45 : r;
    pts.push(`${(rr * Math.cos(a)).toFixed(2)},${(rr * Math.sin(a)).toFixed(2)}`);
  }
  return `M${pts.join("L")}Z`;
}

function legend(g, x, y, entries) {
  entries.forEach(([colour, label], i) => {
    svg("rect", {x, y: y + i * 16 - 9, width: 12, height: 10, fill: colour}, g);
    svg("text", {x: x + 16, y: y + i * 16, class: "attn-tick"}, g).textContent = label;
  });
}

function colourBar(root, x, y, width, lut, lo, hi, label) {
  const g = svg("g", {}, root), n = lut.length;
  lut.forEach((c, i) => svg("rect", {x: x + i * width / n, y, width: width / n + 0.5, height: 8, fill: c}, g));
  svg("text", {x, y: y + 20, class: "attn-tick"}, g).textContent = fmt(lo, 1);
  svg("text", {x: x + width, y: y + 20, "text-anchor": "end", class: "attn-tick"}, g).textContent = fmt(hi, 1);
  svg("text", {x: x + width / 2, y: y + (width < 150 ? 34 : 20), "text-anchor": "middle", class: "attn-tick"}, g).textContent = label;
}

function setPoint(handle, x, y, text) {
  handle.setAttribute("aria-valuenow", fmt(x, 2));
  handle.setAttribute("aria-valuetext", text);
}
