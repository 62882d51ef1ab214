// Proposition 1: one query, four keys (drag them), τ; the weights and the weighted average of the values.

// An arrow's label, centred `gap` px beyond its tip along the arrow: clear of the arrowhead and of the drag
// handle (radius 10) whichever way the arrow points (a zero arrow: up and to the right).
function placeBeyondTip(label, sx, sy, x, y, gap) {
  const dx = sx(x) - sx(0), dy = sy(y) - sy(0), n = Math.hypot(dx, dy);
  const [ux, uy] = n > 1e-9 ? [dx / n, dy / n] : [Math.SQRT1_2, -Math.SQRT1_2];
  label.setAttribute("x", sx(x) + gap * ux); label.setAttribute("y", sy(y) + gap * uy);
}
// a rim in the page's background colour, so that the output's star stands out on a value dot beneath it
const STAR_HALO = "stroke: var(--pst-color-background, var(--jp-layout-color0, #fff)); stroke-width: 1.5px; " +
  "paint-order: stroke";

const EXPLORER = {
  build(ctx) {
    const {svg: root, data} = ctx;
    const C = data.colours, ink = "currentColor";
    ctx.marker = arrowMarkers(root, [...C, ink]);
    // left panel: query and keys, [-2.2, 2.2]² on 250 px
    const sx = scale(-2.2, 2.2, 20, 270), sy = scale(-2.2, 2.2, 280, 30);
    ctx.sx = sx; ctx.sy = sy;
    const gk = svg("g", {}, root);
    panelTitle(gk, 145, 18, "query and keys (drag the arrow tips)");
    svg("rect", {x: 20, y: 30, width: 250, height: 250, class: "attn-frame"}, gk);
    svg("line", {x1: sx(-2.2), x2: sx(2.2), y1: sy(0), y2: sy(0), class: "attn-grid"}, gk);
    svg("line", {x1: sx(0), x2: sx(0), y1: sy(-2.2), y2: sy(2.2), class: "attn-grid"}, gk);
    ctx.keys = C.map((c, i) => {
      const line = svg("line", {x1: sx(0), y1: sy(0), stroke: c, "stroke-width": 2.5, "marker-end": `url(#${ctx.marker[c]})`}, gk);
      const label = svg("text", {class: "attn-label", "text-anchor": "middle", "dominant-baseline": "central"}, gk);
      label.textContent = `k${i + 1}`;
      const handle = svg("circle", {r: 9, fill: c, "fill-opacity": 0.25, stroke: c, role: "slider",
                                    "aria-label": `key k${i + 1}: arrow keys move it`}, gk);
      draggable(handle, sx, sy, (x, y, dx, dy) => {
        const K = ctx.state.K[i];
        const nx = x === null ? K[0] + dx : x, ny = y === null ? K[1] + dy : y;
        ctx.set({key: i + 1, kx: clampRound(nx, -2, 2), ky: clampRound(ny, -2, 2)});
      }, root);
      return {line, label, handle};
    });
    ctx.q = {line: svg("line", {x1: sx(0), y1: sy(0), stroke: ink, "stroke-width": 3, "marker-end": `url(#${ctx.marker[ink]})`}, gk),
             label: svg("text", {class: "attn-label attn-bold", "text-anchor": "middle", "dominant-baseline": "central"}, gk),
             handle: svg("circle", {r: 10, fill: ink, "fill-opacity": 0.15, stroke: ink, role: "slider",
                                    "aria-label": "query q: arrow keys move it"}, gk)};
    ctx.q.label.textContent = "q";
    draggable(ctx.q.handle, sx, sy, (x, y, dx, dy) => {
      const s = ctx.state;
      const nx = x === null ? s.q1 + dx : x, ny = y === null ? s.q2 + dy : y;
      ctx.set({q1: clampRound(nx, -2, 2), q2: clampRound(ny, -2, 2)});
    }, root);

    // middle panel: the weights as bars, [0, 1.15] on 230 px
    ctx.weights = weightPanel(root, C, 1.15, "weight wⱼ", i => `w${i + 1}`);

    // right panel: the values, their hull, the output; x [-1.8, 3.8], y [-0.8, 3.8], equal aspect
    const u = 250 / 5.6, vx = scale(-1.8, 3.8, 630, 880), vy = scale(-0.8, 3.8, 30 + 4.6 * u, 30);
    const gv = svg("g", {}, root);
    panelTitle(gv, 755, 18, "values and output o = Σⱼ wⱼ vⱼ");
    svg("rect", {x: 630, y: 30, width: 250, height: 4.6 * u, class: "attn-frame"}, gv);
    svg("line", {x1: vx(-1.8), x2: vx(3.8), y1: vy(0), y2: vy(0), class: "attn-grid"}, gv);
    svg("line", {x1: vx(0), x2: vx(0), y1: vy(-0.8), y2: vy(3.8), class: "attn-grid"}, gv);
    const V = data.V, hull = data.hull.map(i => V[i]);
    svg("polygon", {points: hull.map(([x, y]) => `${vx(x)},${vy(y)}`).join(" "), class: "attn-hull"}, gv);
    ctx.dots = V.map(([x, y], i) => {
      svg("text", {x: vx(x) + 10, y: vy(y) + 16, class: "attn-label"}, gv).textContent = `v${i + 1}`;
      return svg("circle", {cx: vx(x), cy: vy(y), fill: C[i]}, gv);
    });
    ctx.star = svg("path", {d: starPath(9), class: "attn-star", style: STAR_HALO}, gv);
    ctx.vx = vx; ctx.vy = vy;

    // the numbers, exact in data-value
    const t = html("table", {class: "attn-table"}, ctx.numbers);
    const head = html("tr", {}, t);
    ["", ...C.map((_, i) => `k${i + 1}`)].forEach(h => html("th", {scope: "col"}, head, h));
    ctx.cells = {};
    for (const [row, label] of [["s", "score q·kⱼ/√dₖ"], ["w", "weight wⱼ"]]) {
      const tr = html("tr", {}, t);
      html("th", {scope: "row"}, tr, label);
      ctx.cells[row] = C.map((_, i) => html("td", {"data-name": `${row}${i + 1}`}, tr));
    }
    const p = html("p", {class: "attn-out"}, ctx.numbers, "output o = (");
    ctx.o = [html("span", {"data-name": "o1"}, p), null];
    p.appendChild(document.createTextNode(", "));
    ctx.o[1] = html("span", {"data-name": "o2"}, p);
    p.appendChild(document.createTextNode(")"));
  },

  apply(s, ch) {
    const K = s.K.map(k => [...k]);
    if ("key" in ch && !("kx" in ch) && !("ky" in ch)) {  // picking a key loads its coordinates
      const k = K[ch.key - 1];
      return {...s, key: ch.key, kx: k[0], ky: k[1], K};
    }
    const next = {...s, ...ch, K};
    K[next.key - 1] = [next.kx, next.ky];
    return next;
  },

  compute(s, data) {
    const c = 1 / Math.sqrt(data.d_k);  // d_k from the Python explorer's keys
    const q = [s.q1, s.q2];
    const scores = s.K.map(k => dot(q, k) * c);  // q · kⱼ / √d_k
    const w = softmax(scores, s.tau);
    const o = [0, 1].map(j => w.reduce((acc, wi, i) => acc + wi * data.V[i][j], 0));
    return {scores, w, o};
  },

  draw(ctx, s, r) {
    ctx.state = s;
    const {sx, sy, vx, vy} = ctx;
    s.K.forEach(([x, y], i) => {
      const k = ctx.keys[i];
      k.line.setAttribute("x2", sx(x)); k.line.setAttribute("y2", sy(y));
      k.handle.setAttribute("cx", sx(x)); k.handle.setAttribute("cy", sy(y));
      setPoint(k.handle, x, y, `k${i + 1} = (${fmt(x, 2)}, ${fmt(y, 2)})`);
      placeBeyondTip(k.label, sx, sy, x, y, 22);
    });
    const q = ctx.q;
    q.line.setAttribute("x2", sx(s.q1)); q.line.setAttribute("y2", sy(s.q2));
    q.handle.setAttribute("cx", sx(s.q1)); q.handle.setAttribute("cy", sy(s.q2));
    setPoint(q.handle, s.q1, s.q2, `q = (${fmt(s.q1, 2)}, ${fmt(s.q2, 2)})`);
    placeBeyondTip(q.label, sx, sy, s.q1, s.q2, 22);
    ctx.weights.title.textContent = `softmax(q·kⱼ / √dₖ / τ), τ = ${sig(s.tau, 3)}`;
    setWeights(ctx.weights, r.w);
    r.w.forEach((w, i) => {
      setNum(ctx.cells.w[i], w, 3);
      setNum(ctx.cells.s[i], r.scores[i], 3);
      ctx.dots[i].setAttribute("r", Math.sqrt(40 + 400 * w) / 1.6);
    });
    ctx.star.setAttribute("transform", `translate(${vx(r.o[0])},${vy(r.o[1])})`);
    setNum(ctx.o[0], r.o[0], 3);
    setNum(ctx.o[1], r.o[1], 3);
  },

  describe(s, r) {
    const ws = r.w.map((w, i) => `k${i + 1} ${fmt(w, 2)}`).join(", ");
    return `Query q = (${fmt(s.q1, 2)}, ${fmt(s.q2, 2)}), temperature τ = ${sig(s.tau, 3)}. ` +
      `Keys: ${s.K.map(([x, y], i) => `k${i + 1} = (${fmt(x, 2)}, ${fmt(y, 2)})`).join(", ")}. ` +
      `Weights: ${ws}. The output (${fmt(r.o[0], 2)}, ${fmt(r.o[1], 2)}) is their weighted average of the values ` +
      `and lies inside the shaded region the values span.`;
  },
};
