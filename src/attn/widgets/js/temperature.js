// The temperature explorer: one row of scores through softmax(x / τ), with the entropy against τ.
const EXPLORER = {
  build(ctx) {
    const {svg: root, data} = ctx;
    const T = data.x.length;
    ctx.by = scale(0, 1.08, 250, 40);
    // The bars fill 60-360; the free column 360-420 labels the dotted line of the uniform weight 1/T_k,
    // where no bar and no bar's value is ever drawn, whatever τ.
    const bw = 300 / T, bx = j => 60 + j * bw;
    const g = svg("g", {}, root);
    ctx.wTitle = panelTitle(g, 240, 18, "");
    svg("line", {x1: 60, x2: 60, y1: ctx.by(0), y2: ctx.by(1.08), class: "attn-axis"}, g);
    svg("line", {x1: 60, x2: 420, y1: ctx.by(0), y2: ctx.by(0), class: "attn-axis"}, g);
    axis(g, ctx.by, [0, 0.25, 0.5, 0.75, 1], {x: false, at: 60});
    svg("line", {x1: 60, x2: 420, y1: ctx.by(1 / T), y2: ctx.by(1 / T), class: "attn-grid", "stroke-dasharray": "3 3"}, g);
    for (const [dy, words] of [[-17, "uniform"], [-4, "1/Tₖ"]]) {
      svg("text", {x: 390, y: ctx.by(1 / T) + dy, "text-anchor": "middle", class: "attn-tick",
                   "data-role": "uniform-label"}, g).textContent = words;
    }
    const top = data.x.indexOf(Math.max(...data.x));
    ctx.bars = data.x.map((_, j) => {
      const rect = svg("rect", {x: bx(j) + bw * 0.15, width: bw * 0.7, fill: data.colour,
                                stroke: j === top ? "currentColor" : "none", "stroke-width": 1.5}, g);
      svg("text", {x: bx(j) + bw / 2, y: ctx.by(0) + 15, "text-anchor": "middle", class: "attn-tick"}, g).textContent = data.labels[j];
      const text = T <= 12 ? svg("text", {x: bx(j) + bw / 2, "text-anchor": "middle", class: "attn-tick", "data-name": `w${j + 1}`}, g) : null;
      return {rect, text};
    });
    svg("text", {x: 14, y: 145, class: "attn-tick", transform: "rotate(-90 14 145)", "text-anchor": "middle"}, g).textContent = "weight";

    // right: entropy against log10 τ
    const lo = Math.log10(data.taus[0]), hi = Math.log10(data.taus[data.taus.length - 1]);
    const hx = scale(lo, hi, 520, 880), logT = Math.log(T), hy = scale(-0.22 * logT, 1.24 * logT, 250, 40);
    ctx.hx = hx; ctx.hy = hy;
    const h = svg("g", {}, root);
    ctx.hTitle = panelTitle(h, 700, 18, "");
    svg("rect", {x: 520, y: 40, width: 360, height: 210, class: "attn-frame"}, h);
    axis(h, hx, [-2, -1, 0, 1, 2].filter(t => t >= lo && t <= hi), {at: 250, fmtTick: t => String(Math.pow(10, t))});
    axis(h, hy, [0, 0.5, 1, 1.5, 2, 2.5, 3].filter(t => t <= logT * 1.1), {x: false, at: 520});
    // The curve lies between 0 and log T_k: each limit is labelled outside that band, at the end of the τ
    // axis where the curve comes close to it (one-hot below 0 at small τ, uniform above log T_k at large τ);
    // each sits far enough from its end of the axis that the marker of an extreme τ, on the line, clears it.
    for (const [v, label, anchor, x, dy] of [[0, "0: one-hot", "start", 524, 20], [logT, "log Tₖ: uniform", "end", 864, -12]]) {
      svg("line", {x1: 520, x2: 880, y1: hy(v), y2: hy(v), class: "attn-grid", "stroke-dasharray": "3 3"}, h);
      svg("text", {x, y: hy(v) + dy, "text-anchor": anchor, class: "attn-tick", "data-role": "limit-label"}, h).textContent = label;
    }
    for (const [label, tau] of data.marks) {
      // the label sits in the half of the entropy axis away from the curve where it crosses the mark
      const at = hy((entropy(softmax(data.x, tau)) > logT / 2 ? 0.25 : 0.75) * logT), x = hx(Math.log10(tau)) + 10;
      svg("line", {x1: hx(Math.log10(tau)), x2: hx(Math.log10(tau)), y1: 40, y2: 250, class: "attn-grid", "stroke-dasharray": "6 3"}, h);
      svg("text", {x, y: at, class: "attn-tick", "text-anchor": "middle", transform: `rotate(-90 ${x} ${at})`,
                   "data-role": "mark"}, h).textContent = label;
    }
    svg("polyline", {points: data.taus.map((t, i) => `${hx(Math.log10(t)).toFixed(1)},${hy(data.entropy[i]).toFixed(1)}`).join(" "),
                     class: "attn-curve", stroke: data.colour}, h);
    svg("text", {x: 700, y: 285, "text-anchor": "middle", class: "attn-tick"}, h).textContent = "temperature τ (log scale)";
    svg("text", {x: 488, y: 145, class: "attn-tick", transform: "rotate(-90 488 145)", "text-anchor": "middle"}, h).textContent = "entropy H (nats)";
    ctx.marker = svg("circle", {r: 6, class: "attn-star"}, h);
    const p = html("p", {class: "attn-out"}, ctx.numbers, "weights: ");
    ctx.cells = data.x.map((_, j) => {
      if (j) p.appendChild(document.createTextNode(", "));
      p.appendChild(document.createTextNode(`${data.labels[j]} `));
      return html("span", {"data-name": `w${j + 1}`}, p);
    });
    p.appendChild(document.createTextNode("; entropy H = "));
    ctx.H = html("span", {"data-name": "H"}, p);
    p.appendChild(document.createTextNode(" nats"));
  },

  compute(s, data) {
    const w = softmax(data.x, s.tau);
    return {w, H: entropy(w)};
  },

  draw(ctx, s, r) {
    const T = r.w.length;
    ctx.wTitle.textContent = `softmax weights at τ = ${sig(s.tau, 3)}`;
    ctx.hTitle.textContent = `entropy ${r.H.toFixed(2)} nats (max log Tₖ = ${Math.log(T).toFixed(2)})`;
    r.w.forEach((w, j) => {
      const b = ctx.bars[j];
      b.rect.setAttribute("y", ctx.by(w));
      b.rect.setAttribute("height", Math.max(0, ctx.by(0) - ctx.by(w)));
      if (b.text) { b.text.setAttribute("y", ctx.by(w) - 4); b.text.textContent = fmt(w, 2); }
      setNum(ctx.cells[j], w, 2);   // as the bar labels and the text write them
    });
    setNum(ctx.H, r.H, 2);   // as the entropy panel's title and the text write it
    ctx.marker.setAttribute("cx", ctx.hx(Math.log10(s.tau)));
    ctx.marker.setAttribute("cy", ctx.hy(r.H));
  },

  describe(s, r, data) {
    // "the largest" names one key only where the weights, as the text rounds them, single it out
    const top = fmt(Math.max(...r.w), 2);
    const tied = data.labels.filter((_, j) => fmt(r.w[j], 2) === top);
    const largest = tied.length === 1 ? `the largest is ${tied[0]}`
      : tied.length === r.w.length ? "they are equal to two decimals"
      : `${tied.slice(0, -1).join(", ")} and ${tied[tied.length - 1]} share the largest, to two decimals`;
    return `At temperature τ = ${sig(s.tau, 3)} the ${r.w.length} weights are ` +
      r.w.map((w, j) => `${data.labels[j]} ${fmt(w, 2)}`).join(", ") +
      `; ${largest}. Their entropy is ${r.H.toFixed(2)} nats, between 0 (one-hot) and ` +
      `log Tₖ = ${Math.log(r.w.length).toFixed(2)} (uniform).`;
  },
};
