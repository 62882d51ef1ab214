// Proposition 5: the cost measured when the page was built, against T on log-log axes; pick a T.
const EXPLORER = {
  build(ctx) {
    const {svg: root, data} = ctx;
    const T = data.T, lt = T.map(Math.log10);
    const xlo = lt[0] - 0.15, xhi = lt[lt.length - 1] + 0.15;
    const range = vals => { const l = vals.map(Math.log10); return [Math.floor(Math.min(...l) - 0.1), Math.ceil(Math.max(...l) + 0.1)]; };
    const panels = [
      ["time", 60, "time to form QKᵀ/√dₖ (ms)", [[data.ms, data.fit_ms, data.colours[0], "circle", `measured; fit slope ${data.slope_time.toFixed(2)}`]]],
      ["memory", 520, "peak memory (MiB)", [[data.mib_full, data.fit_full, data.colours[0], "circle", `full attention: slope ${data.slope_full.toFixed(2)}`],
                                           [data.mib_blocked, data.fit_blocked, data.colours[1], "square", `blocked: slope ${data.slope_blocked.toFixed(2)}`]]],
    ];
    ctx.vlines = []; ctx.rings = []; ctx.px = {}; ctx.py = {};
    for (const [name, x0, ylabel, series] of panels) {
      const g = svg("g", {}, root);
      const [ylo, yhi] = range(series.flatMap(s => s[0].concat(s[1])));
      const x = scale(xlo, xhi, x0, x0 + 340), y = scale(ylo, yhi, 260, 50);
      ctx.px[name] = x; ctx.py[name] = y;
      panelTitle(g, x0 + 170, 38, name);
      svg("rect", {x: x0, y: 50, width: 340, height: 210, class: "attn-frame"}, g);
      axis(g, x, lt, {at: 260, fmtTick: t => String(Math.round(Math.pow(10, t)))});
      const ticks = []; for (let t = ylo; t <= yhi; t++) ticks.push(t);
      axis(g, y, ticks, {x: false, at: x0, fmtTick: t => (t >= 0 ? String(Math.pow(10, t)) : `1e${t}`)});
      svg("text", {x: x0 + 170, y: 292, "text-anchor": "middle", class: "attn-tick"}, g).textContent = "sequence length T (log scale)";
      svg("text", {x: x0 - 42, y: 155, class: "attn-tick", transform: `rotate(-90 ${x0 - 42} 155)`, "text-anchor": "middle"}, g).textContent = ylabel;
      series.forEach(([pts, fit, c, shape, label], k) => {
        svg("polyline", {points: fit.map((v, i) => `${x(lt[i]).toFixed(1)},${y(Math.log10(v)).toFixed(1)}`).join(" "),
                         class: "attn-curve", stroke: c, "stroke-opacity": 0.6, "stroke-dasharray": k ? "6 3" : ""}, g);
        pts.forEach((v, i) => shape === "circle"
          ? svg("circle", {cx: x(lt[i]), cy: y(Math.log10(v)), r: 4, fill: c}, g)
          : svg("rect", {x: x(lt[i]) - 4, y: y(Math.log10(v)) - 4, width: 8, height: 8, fill: c}, g));
        svg("rect", {x: x0 + 8, y: 58 + k * 16, width: 10, height: 10, fill: c}, g);
        svg("text", {x: x0 + 22, y: 67 + k * 16, class: "attn-tick"}, g).textContent = label;
      });
      ctx.vlines.push([svg("line", {y1: 50, y2: 260, class: "attn-grid", "stroke-dasharray": "2 3"}, g), x]);
      ctx.rings.push([svg("circle", {r: 9, fill: "none", stroke: "currentColor", "stroke-width": 2}, g), name]);
    }
    ctx.note = panelTitle(root, 450, 16, "");
    const tb = html("table", {class: "attn-table"}, ctx.numbers);
    const head = html("tr", {}, tb);
    ["T", "entries T²", `score matrix (MiB, ${data.dtype})`, "time (ms)", "peak, full (MiB)", "peak, blocked (MiB)"].forEach(h => html("th", {scope: "col"}, head, h));
    const tr = html("tr", {}, tb);
    ctx.cells = ["T", "entries", "score_mib", "ms", "mib_full", "mib_blocked"].map(n => html("td", {"data-name": n}, tr));
  },

  compute(s, data) {
    const i = data.T.indexOf(s.T);
    const T = data.T[i];
    return {i, T, entries: T * T, score_mib: data.score_mib[i], ms: data.ms[i], mib_full: data.mib_full[i], mib_blocked: data.mib_blocked[i],
            dtype: data.dtype, dtype_words: data.dtype_words};
  },

  draw(ctx, s, r) {
    const lt = Math.log10(r.T);
    for (const [line, x] of ctx.vlines) { line.setAttribute("x1", x(lt)); line.setAttribute("x2", x(lt)); }
    ctx.rings[0][0].setAttribute("cx", ctx.px.time(lt)); ctx.rings[0][0].setAttribute("cy", ctx.py.time(Math.log10(r.ms)));
    ctx.rings[1][0].setAttribute("cx", ctx.px.memory(lt)); ctx.rings[1][0].setAttribute("cy", ctx.py.memory(Math.log10(r.mib_full)));
    ctx.note.textContent = `T = ${r.T}: T² = ${r.entries.toLocaleString("en")} scores, ` +
      `${r.score_mib.toFixed(2)} MiB in ${r.dtype}; formed in ${r.ms.toFixed(3)} ms`;   // as the table below writes them
    const [cT, cE, cS, cMs, cF, cB] = ctx.cells;
    setNum(cT, r.T, 0); setNum(cE, r.entries, 0); setNum(cS, r.score_mib, 2); setNum(cMs, r.ms, 3);
    setNum(cF, r.mib_full, 2); setNum(cB, r.mib_blocked, 2);
  },

  describe(s, r) {
    return `Selected T = ${r.T}. Measured when the explorer was made (in the book: when the page was built): the T by T score matrix has ${r.entries} entries ` +
      `(${r.score_mib.toFixed(2)} MiB in ${r.dtype_words}) and took ${r.ms.toFixed(3)} ms to form; full attention peaked at ` +
      `${r.mib_full.toFixed(2)} MiB, blocked attention at ${r.mib_blocked.toFixed(2)} MiB.`;
  },
};
