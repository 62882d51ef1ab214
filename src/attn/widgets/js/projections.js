// Proposition 2: one token, three projections W = scale · R(angle); which of them reaches the output.
function rotationScale(angleDeg, s) {  // as attn.widgets.projections.rotation_scale: x @ W turns x by angle
  const a = angleDeg * Math.PI / 180, c = Math.cos(a), n = Math.sin(a);
  return [[s * c, s * n], [-s * n, s * c]];
}

// a rim in the page's background colour, so that the output's star stands out on a value dot beneath it
const STAR_HALO = "stroke: var(--pst-color-background, var(--jp-layout-color0, #fff)); stroke-width: 1.5px; " +
  "paint-order: stroke";

const EXPLORER = {
  build(ctx) {
    const {svg: root, data} = ctx;
    // token j's colour in every panel (C); q, k and v in the text's colour (currentColor, so dark mode
    // follows), told apart by their dash patterns (data.qkv_dashes) and labels: no colour means two things
    const C = data.colours, ink = "currentColor", DASH = data.qkv_dashes;
    ctx.marker = arrowMarkers(root, [ink]);
    const sx = scale(-3, 3, 20, 270), sy = scale(-3, 3, 280, 30);
    ctx.sx = sx; ctx.sy = sy;
    const g = svg("g", {}, root);
    ctx.xTitle = panelTitle(g, 145, 18, "");
    svg("rect", {x: 20, y: 30, width: 250, height: 250, class: "attn-frame"}, g);
    svg("line", {x1: 20, x2: 270, y1: sy(0), y2: sy(0), class: "attn-grid"}, g);
    svg("line", {x1: sx(0), x2: sx(0), y1: 30, y2: 280, class: "attn-grid"}, g);
    data.X.forEach(([x, y], j) => {
      svg("circle", {cx: sx(x), cy: sy(y), r: 4, fill: C[j]}, g);
      svg("text", {x: sx(x) + 5, y: sy(y) + 14, class: "attn-tick"}, g).textContent = `x${j + 1}`;
    });
    ctx.xArrow = svg("line", {x1: sx(0), y1: sy(0), stroke: ink, "stroke-opacity": 0.55, "stroke-width": 1.6,
                              "stroke-dasharray": data.x_dash, "marker-end": `url(#${ctx.marker[ink]})`}, g);
    ctx.arrows = {};
    for (const name of ["q", "k", "v"]) {
      const M = name.toUpperCase();
      const line = svg("line", {x1: sx(0), y1: sy(0), stroke: ink, "stroke-width": 2.5, "stroke-dasharray": DASH[name],
                                "marker-end": `url(#${ctx.marker[ink]})`}, g);
      const label = svg("text", {class: "attn-label attn-bold"}, g);
      const handle = svg("circle", {r: 9, fill: ink, "fill-opacity": 0.15, stroke: ink, role: "slider",
                                    "aria-label": `${name} = x W_${M}: drag or use the arrow keys to turn and stretch W_${M}`}, g);
      draggable(handle, sx, sy, (x, y, dx, dy) => {
        const s = ctx.state, t = ctx.data.X[s.token - 1];
        const cur = ctx.result[name];
        const px = x === null ? cur[0] + dx : x, py = y === null ? cur[1] + dy : y;
        // the matrix that sends x_t to the point: scale |p| / |x_t|, angle from x_t to p
        let angle = (Math.atan2(py, px) - Math.atan2(t[1], t[0])) * 180 / Math.PI;
        angle = ((angle + 540) % 360) - 180;
        const sc = Math.hypot(px, py) / Math.hypot(t[0], t[1]);
        ctx.set({[`angle_${M}`]: clampRound(angle, -180, 180, 1), [`scale_${M}`]: clampRound(sc, 0, 2.5, 0.01)});
      }, root, 0.1);
      ctx.arrows[name] = {line, label, handle};
    }
    // middle: the weights w_tj
    ctx.weights = weightPanel(root, C, 1.2, "weight w_tj");
    // right: values, their hull, the output
    const vx = scale(-3, 3, 630, 880), vy = scale(-3, 3, 280, 30);
    ctx.vx = vx; ctx.vy = vy;
    const gv = svg("g", {}, root);
    panelTitle(gv, 755, 18, "values and output: only V gets here");
    svg("rect", {x: 630, y: 30, width: 250, height: 250, class: "attn-frame"}, gv);
    svg("line", {x1: 630, x2: 880, y1: vy(0), y2: vy(0), class: "attn-grid"}, gv);
    svg("line", {x1: vx(0), x2: vx(0), y1: 30, y2: 280, class: "attn-grid"}, gv);
    ctx.hull = svg("polygon", {class: "attn-hull"}, gv);
    // the value dots half transparent and the star haloed, so the output stays visible on a heavy value
    ctx.dots = C.map((c, j) => ({dot: svg("circle", {fill: c, "fill-opacity": 0.55, stroke: c, "stroke-width": 1.5}, gv),
                                 label: svg("text", {class: "attn-tick", "text-anchor": "middle",
                                                     "dominant-baseline": "central"}, gv)}));
    ctx.dots.forEach((d, j) => { d.label.textContent = `v${j + 1}`; });
    ctx.star = svg("path", {d: starPath(9), class: "attn-star", style: STAR_HALO}, gv);

    const tb = html("table", {class: "attn-table"}, ctx.numbers);
    const head = html("tr", {}, tb);
    ["", "first", "second"].forEach(h => html("th", {scope: "col"}, head, h));
    ctx.cells = {};
    for (const [n, label] of [["q", "query q_t = x_t W_Q"], ["k", "key k_t = x_t W_K"], ["v", "value v_t = x_t W_V"], ["o", "output o_t"]]) {
      const tr = html("tr", {}, tb);
      html("th", {scope: "row"}, tr, label);
      ctx.cells[n] = [1, 2].map(c => html("td", {"data-name": `${n}${c}`}, tr));
    }
    const p = html("p", {class: "attn-out"}, ctx.numbers, "weights w_tj: ");
    ctx.wcells = C.map((_, j) => {
      if (j) p.appendChild(document.createTextNode(", "));
      p.appendChild(document.createTextNode(`k${j + 1} `));
      return html("span", {"data-name": `a${j + 1}`}, p);
    });
  },

  compute(s, data) {
    const W = {};
    for (const M of ["Q", "K", "V"]) W[M] = rotationScale(s[`angle_${M}`], s[`scale_${M}`]);
    const Q = matmul(data.X, W.Q), K = matmul(data.X, W.K), V = matmul(data.X, W.V);  // (T, 2) @ (2, 2)
    const {W: A, O} = attention(Q, K, V);
    const t = s.token - 1;
    return {t, x: data.X[t], q: Q[t], k: K[t], v: V[t], V, a: A[t], o: O[t]};
  },

  draw(ctx, s, r) {
    ctx.state = s; ctx.result = r;
    const {sx, sy, vx, vy} = ctx, n = r.t + 1;
    ctx.xArrow.setAttribute("x2", sx(r.x[0])); ctx.xArrow.setAttribute("y2", sy(r.x[1]));
    ctx.xTitle.textContent = `token x${n} and its q, k, v`;
    for (const name of ["q", "k", "v"]) {
      const a = ctx.arrows[name], p = r[name];
      a.line.setAttribute("x2", sx(p[0])); a.line.setAttribute("y2", sy(p[1]));
      a.handle.setAttribute("cx", sx(p[0])); a.handle.setAttribute("cy", sy(p[1]));
      setPoint(a.handle, p[0], p[1], `${name}${n} = (${fmt(p[0], 2)}, ${fmt(p[1], 2)})`);
      a.label.setAttribute("x", sx(p[0] * 1.08) + 6); a.label.setAttribute("y", sy(p[1] * 1.08) - 6);
      a.label.textContent = `${name}${n}`;
      setNum(ctx.cells[name][0], p[0], 3); setNum(ctx.cells[name][1], p[1], 3);
    }
    ctx.weights.title.textContent = `weights of q${n}: softmax(q${n}·kⱼ / √dₖ)`;
    setWeights(ctx.weights, r.a);
    const mx = r.V.reduce((a, v) => a + v[0], 0) / r.V.length, my = r.V.reduce((a, v) => a + v[1], 0) / r.V.length;
    r.a.forEach((w, j) => {
      setNum(ctx.wcells[j], w, 3);
      const v = r.V[j], d = ctx.dots[j], rad = Math.sqrt(30 + 300 * w) / 1.6;
      d.dot.setAttribute("cx", vx(v[0])); d.dot.setAttribute("cy", vy(v[1]));
      d.dot.setAttribute("r", rad);
      // the label outside the hull, away from the values' centre (the output is inside the hull)
      const ux = vx(v[0]) - vx(mx), uy = vy(v[1]) - vy(my), n = Math.hypot(ux, uy) || 1;
      d.label.setAttribute("x", vx(v[0]) + (rad + 10) * ux / n); d.label.setAttribute("y", vy(v[1]) + (rad + 10) * uy / n);
    });
    const ring = [...r.V].sort((a, b) => Math.atan2(a[1] - my, a[0] - mx) - Math.atan2(b[1] - my, b[0] - mx));
    ctx.hull.setAttribute("points", ring.map(([x, y]) => `${vx(x).toFixed(1)},${vy(y).toFixed(1)}`).join(" "));
    ctx.star.setAttribute("transform", `translate(${vx(r.o[0])},${vy(r.o[1])})`);
    setNum(ctx.cells.o[0], r.o[0], 3); setNum(ctx.cells.o[1], r.o[1], 3);
  },

  describe(s, r) {
    const n = r.t + 1, v2 = p => `(${fmt(p[0], 2)}, ${fmt(p[1], 2)})`;
    return `Token x${n} = ${v2(r.x)}. W_Q turns it by ${s.angle_Q}° and stretches it by ${s.scale_Q}: q${n} = ${v2(r.q)}; ` +
      `W_K by ${s.angle_K}° and ${s.scale_K}: k${n} = ${v2(r.k)}; W_V by ${s.angle_V}° and ${s.scale_V}: v${n} = ${v2(r.v)}. ` +
      `The weights of q${n} on the keys are ${r.a.map(w => fmt(w, 2)).join(", ")}; the output ${v2(r.o)} ` +
      `is their average of the value vectors and lies inside the region they enclose.`;
  },
};
