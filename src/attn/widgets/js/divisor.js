// Proposition 3: the width d_k, the spread of q·k with and without 1/√d_k, and what follows.
// The random draws are made once in Python (build time); per width it sends what the picture shows.
const EXPLORER = {
  build(ctx) {
    const {svg: root, data} = ctx;
    const U = data.colours[0], S = data.colours[1];
    // top left: histograms over [-100, 100], on a log density axis from hist_floor to hist_top, so that the
    // wide, low histogram of q·k at large d_k stays as visible as the tall one of q·k / √d_k
    const lo = Math.log10(data.hist_floor), hi = Math.log10(data.hist_top);
    const hx = scale(-100, 100, 60, 420), ly = scale(lo, hi, 250, 40);
    const hy = v => ly(Math.log10(Math.min(Math.max(v, data.hist_floor), data.hist_top)));
    ctx.hx = hx; ctx.hy = hy;
    const g1 = svg("g", {}, root);
    ctx.hTitle = panelTitle(g1, 240, 18, "");
    svg("rect", {x: 60, y: 40, width: 360, height: 210, class: "attn-frame"}, g1);
    axis(g1, hx, [-100, -50, 0, 50, 100], {at: 250});
    const decades = []; for (let t = Math.ceil(lo); t <= hi; t++) decades.push(t);
    axis(g1, ly, decades, {x: false, at: 60, fmtTick: t => `1e${t}`});
    // the unscaled histogram: drawn nearly opaque, with an edge
    ctx.histU = svg("path", {fill: U, "fill-opacity": 0.85, stroke: U, "stroke-width": 1}, g1);
    ctx.histS = svg("path", {fill: S, "fill-opacity": 0.6}, g1);
    svg("text", {x: 240, y: 280, "text-anchor": "middle", class: "attn-tick"}, g1).textContent = "value";
    svg("text", {x: 18, y: 145, "text-anchor": "middle", class: "attn-tick", transform: "rotate(-90 18 145)"}, g1)
      .textContent = "fraction per unit (log scale)";
    legend(g1, 300, 56, [[U, "q·k"], [S, "q·k / √dₖ"]]);
    ctx.std = [svg("text", {x: 66, y: 56, class: "attn-tick"}, g1), svg("text", {x: 66, y: 70, class: "attn-tick"}, g1)];

    // top right: one typical query's weights
    const T = data.T, bx = j => 520 + j * 360 / T, by = scale(0, 1.32, 250, 40);
    ctx.by = by;
    const g2 = svg("g", {}, root);
    ctx.wTitle = panelTitle(g2, 700, 18, "");
    ctx.wTitle.classList.add("attn-tick");
    svg("line", {x1: 520, x2: 880, y1: 250, y2: 250, class: "attn-axis"}, g2);
    svg("line", {x1: 520, x2: 520, y1: 40, y2: 250, class: "attn-axis"}, g2);
    axis(g2, by, [0, 0.2, 0.4, 0.6, 0.8, 1], {x: false, at: 520});
    legend(g2, 740, 56, [[U, "unscaled"], [S, "/√dₖ"]]);
    const w = 360 / T;
    ctx.bars = Array.from({length: T}, (_, j) => {
      svg("text", {x: bx(j) + w / 2, y: 265, "text-anchor": "middle", class: "attn-tick"}, g2).textContent = `k${j + 1}`;
      return [svg("rect", {x: bx(j) + w * 0.1, width: w * 0.4, fill: U}, g2),
              svg("rect", {x: bx(j) + w * 0.5, width: w * 0.4, fill: S}, g2)];
    });

    // bottom: curves against log2 d_k
    const n = data.d_k.length, cx = (x0) => scale(0, n - 1, x0, x0 + 360);
    const lx = cx(60), rx = cx(520), my = scale(0, 1.05, 540, 330);
    const gl = data.jac_norm_unscaled.concat(data.jac_norm_scaled).map(Math.log10);
    const glo = Math.floor(Math.min(...gl)), ghi = Math.ceil(Math.max(...gl)), gy = scale(glo, ghi, 540, 330);
    ctx.lx = lx; ctx.rx = rx; ctx.my = my; ctx.gy = gy;
    const g3 = svg("g", {}, root), g4 = svg("g", {}, root);
    panelTitle(g3, 240, 318, `largest of ${T} weights (average)`);
    // ‖J‖_F is not a gradient: it bounds how much the softmax scales a gradient passing through it
    const gradTitle = panelTitle(g4, 700, 318, "Jacobian norm, median ‖diag(w) − wwᵀ‖");
    svg("tspan", {"baseline-shift": "sub", "font-size": "11px"}, gradTitle).textContent = "F";  // the Frobenius norm
    for (const [g, x, x0] of [[g3, lx, 60], [g4, rx, 520]]) {
      svg("rect", {x: x0, y: 330, width: 360, height: 210, class: "attn-frame"}, g);
      axis(g, x, data.d_k.map((_, i) => i).filter(i => i % 2 === 0), {at: 540, fmtTick: i => String(data.d_k[i])});
      svg("text", {x: x0 + 180, y: 575, "text-anchor": "middle", class: "attn-tick"}, g).textContent = "dₖ (log scale)";
    }
    axis(g3, my, [0, 0.25, 0.5, 0.75, 1], {x: false, at: 60});
    // the colours, as in the top panels (and the static figure's legends)
    legend(g3, 340, my(0.6), [[U, "unscaled"], [S, "/√dₖ"]]);
    legend(g4, 530, 508, [[U, "unscaled"], [S, "/√dₖ"]]);
    // the largest weight of a uniform row, 1/T_k: the floor of the curves
    svg("line", {x1: 60, x2: 420, y1: my(1 / T), y2: my(1 / T), class: "attn-grid", "stroke-dasharray": "3 3"}, g3);
    svg("text", {x: 66, y: my(1 / T) - 4, class: "attn-tick", "data-role": "line-label"}, g3).textContent = "uniform row: 1/Tₖ";
    const ticks = []; for (let t = glo; t <= ghi; t++) ticks.push(t);
    axis(g4, gy, ticks, {x: false, at: 520, fmtTick: t => `1e${t}`});
    const line = (g, xs, ys, yv, c) => svg("polyline", {points: yv.map((v, i) => `${xs(i).toFixed(1)},${ys(v).toFixed(1)}`).join(" "),
                                                        class: "attn-curve", stroke: c}, g);
    line(g3, lx, my, data.max_weight_unscaled, U); line(g3, lx, my, data.max_weight_scaled, S);
    line(g4, rx, gy, data.jac_norm_unscaled.map(Math.log10), U); line(g4, rx, gy, data.jac_norm_scaled.map(Math.log10), S);
    ctx.vl = [svg("line", {y1: 330, y2: 540, class: "attn-grid"}, g3), svg("line", {y1: 330, y2: 540, class: "attn-grid"}, g4)];
    ctx.marks = [0, 1, 2, 3].map(i => svg("circle", {r: 6, fill: "none", stroke: "currentColor", "stroke-width": 2}, i < 2 ? g3 : g4));

    const tb = html("table", {class: "attn-table"}, ctx.numbers);
    const head = html("tr", {}, tb);
    ["", "standard deviation", "typical largest weight", "mean largest weight", "median Jacobian norm"].forEach(h => html("th", {scope: "col"}, head, h));
    ctx.cells = {};
    for (const [k, label] of [["unscaled", "q·k"], ["scaled", "q·k / √dₖ"]]) {
      const tr = html("tr", {}, tb);
      html("th", {scope: "row"}, tr, label);
      ctx.cells[k] = ["std", "top", "mean_max", "jac_norm"].map(n => html("td", {"data-name": `${n}_${k}`}, tr));
    }
  },

  compute(s, data) {
    const i = data.d_k.indexOf(s.d_k);
    return {i, ...data.by_d_k[i]};
  },

  draw(ctx, s, r) {
    const {hx, hy, by, data} = {...ctx, data: ctx.data};
    const path = h => {  // a filled step histogram over the bin edges, from the first non-empty bin to the last
      const first = h.findIndex(v => v > 0), last = h.length - 1 - [...h].reverse().findIndex(v => v > 0);
      if (first < 0) return "";
      let d = `M${hx(data.edges[first]).toFixed(1)},${hy(0)}`;
      for (let b = first; b <= last; b++) {
        d += `L${hx(data.edges[b]).toFixed(1)},${hy(h[b]).toFixed(1)}L${hx(data.edges[b + 1]).toFixed(1)},${hy(h[b]).toFixed(1)}`;
      }
      return d + `L${hx(data.edges[last + 1]).toFixed(1)},${hy(0)}Z`;
    };
    ctx.histU.setAttribute("d", path(r.hist_unscaled));
    ctx.histS.setAttribute("d", path(r.hist_scaled));
    ctx.hTitle.textContent = `spread of q·k and q·k / √dₖ, dₖ = ${s.d_k}`;
    // both standard deviations to the same precision: at d_k = 1 they are one and the same number
    ctx.std[0].textContent = `std of q·k: ${r.std_unscaled.toFixed(2)}  (√dₖ = ${Math.sqrt(s.d_k).toFixed(2)})`;
    ctx.std[1].textContent = `std of q·k / √dₖ: ${r.std_scaled.toFixed(2)}`;
    r.weights_unscaled.forEach((w, j) => {
      const [u, sc] = ctx.bars[j];
      u.setAttribute("y", by(w)); u.setAttribute("height", by(0) - by(w));
      const ws = r.weights_scaled[j];
      sc.setAttribute("y", by(ws)); sc.setAttribute("height", by(0) - by(ws));
    });
    const topU = Math.max(...r.weights_unscaled), topS = Math.max(...r.weights_scaled);
    ctx.wTitle.textContent = `a typical query: top weight ${topU.toFixed(2)} unscaled, ${topS.toFixed(2)} scaled`;
    const i = r.i, c = data;
    ctx.vl[0].setAttribute("x1", ctx.lx(i)); ctx.vl[0].setAttribute("x2", ctx.lx(i));
    ctx.vl[1].setAttribute("x1", ctx.rx(i)); ctx.vl[1].setAttribute("x2", ctx.rx(i));
    const pts = [[ctx.lx(i), ctx.my(c.max_weight_unscaled[i])], [ctx.lx(i), ctx.my(c.max_weight_scaled[i])],
                 [ctx.rx(i), ctx.gy(Math.log10(c.jac_norm_unscaled[i]))], [ctx.rx(i), ctx.gy(Math.log10(c.jac_norm_scaled[i]))]];
    pts.forEach(([x, y], k) => { ctx.marks[k].setAttribute("cx", x); ctx.marks[k].setAttribute("cy", y); });
    for (const k of ["unscaled", "scaled"]) {
      const [std, top, mean, jac] = ctx.cells[k];
      // two decimals, as the titles and the text write the same numbers
      setNum(std, r[`std_${k}`], 2);
      setNum(top, k === "unscaled" ? topU : topS, 2);
      setNum(mean, c[`max_weight_${k}`][i], 2);
      jac.textContent = c[`jac_norm_${k}`][i].toExponential(2);
      jac.dataset.value = String(c[`jac_norm_${k}`][i]);
    }
  },

  describe(s, r, data) {
    const i = r.i;
    return `Width dₖ = ${s.d_k}. The dot products q·k have standard deviation ${r.std_unscaled.toFixed(2)}, ` +
      `the scores q·k / √dₖ ${r.std_scaled.toFixed(2)}. A typical query puts ${Math.max(...r.weights_unscaled).toFixed(2)} ` +
      `of its weight on one key without the divisor and ${Math.max(...r.weights_scaled).toFixed(2)} with it. ` +
      `The median Jacobian norm, which bounds how much a gradient through the softmax is scaled, is ` +
      `${data.jac_norm_unscaled[i].toExponential(2)} unscaled and ${data.jac_norm_scaled[i].toExponential(2)} scaled.`;
  },
};
