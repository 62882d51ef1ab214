// Proposition 4: one attention block, two wirings. Q from X; K and V from X (self) or from the first T_k rows of Y (cross).

// A heatmap cell with an SVG <title> child: the browser shows its text (the cell's value to 4 significant
// digits, as Python's .4g writes it; the exact value is in data-value) on hover.
function withTitle(rect) { svg("title", {}, rect); return rect; }

const EXPLORER = {
  build(ctx) {
    const {svg: root, data} = ctx;
    const cell = 30, Tq = data.T_q, Tmax = data.T_k_max, dv = data.d_v;
    const panels = [["S", 50, "scores QKᵀ/√dₖ"], ["W", 410, "weights"]];
    ctx.grid = {};
    ctx.titles = {};
    // Each matrix panel is drawn as wide as the T_k columns it shows (draw() resizes it), centred in a
    // slot wide enough for the most keys: no part of a frame is ever empty.
    ctx.panels = {};
    ctx.cell = cell;
    for (const [name, x0, title] of panels) {
      const g = svg("g", {}, root);
      ctx.titles[name] = panelTitle(g, x0 + Tmax * cell / 2, 48, title);
      const frame = svg("rect", {x: x0, y: 60, width: Tmax * cell, height: Tq * cell, class: "attn-frame"}, g);
      ctx.grid[name] = Array.from({length: Tq}, (_, i) => Array.from({length: Tmax}, (_, j) =>
        withTitle(svg("rect", {x: x0 + j * cell, y: 60 + i * cell, width: cell - 1, height: cell - 1, "data-name": `${name}${i + 1}_${j + 1}`}, g))));
      for (let i = 0; i < Tq; i++) svg("text", {x: x0 - 6, y: 60 + i * cell + 19, "text-anchor": "end", class: "attn-tick"}, g).textContent = `q${i + 1}`;
      ctx[`keys${name}`] = Array.from({length: Tmax}, (_, j) => svg("text", {x: x0 + j * cell + cell / 2, y: 60 + Tq * cell + 14,
                                                                              "text-anchor": "middle", class: "attn-tick"}, g));
      const axis = svg("text", {x: x0 + Tmax * cell / 2, y: 60 + Tq * cell + 32, "text-anchor": "middle", class: "attn-tick"}, g);
      axis.textContent = "key j";
      ctx.panels[name] = {g, frame, axis, x0};
    }
    const x0 = 770, g = svg("g", {}, root);
    panelTitle(g, x0 + dv * cell / 2, 48, `output ${Tq}×${dv}`);
    ctx.grid.O = Array.from({length: Tq}, (_, i) => Array.from({length: dv}, (_, c) =>
      withTitle(svg("rect", {x: x0 + c * cell, y: 60 + i * cell, width: cell - 1, height: cell - 1, "data-name": `O${i + 1}_${c + 1}`}, g))));
    for (let c = 0; c < dv; c++) svg("text", {x: x0 + c * cell + cell / 2, y: 60 + Tq * cell + 14, "text-anchor": "middle", class: "attn-tick"}, g).textContent = String(c + 1);
    svg("text", {x: x0 + dv * cell / 2, y: 60 + Tq * cell + 32, "text-anchor": "middle", class: "attn-tick"}, g).textContent = "feature";
    ctx.suptitle = panelTitle(root, 450, 18, "");
    // colour keys
    colourBar(root, 50, 260, 300, data.viridis, -data.s_lim, data.s_lim, "score");
    colourBar(root, 410, 260, 300, data.cividis, 0, 1, "weight");
    colourBar(root, 770, 260, 90, data.viridis, data.v_min, data.v_max, "output");

    const tb = html("table", {class: "attn-table"}, ctx.numbers);
    const cap = html("caption", {}, tb, "output rows oᵢ (each a weighted average of the value rows)");
    const head = html("tr", {}, tb);
    ["", ...Array.from({length: dv}, (_, c) => `feature ${c + 1}`)].forEach(h => html("th", {scope: "col"}, head, h));
    ctx.cells = Array.from({length: Tq}, (_, i) => {
      const tr = html("tr", {}, tb);
      html("th", {scope: "row"}, tr, `o${i + 1}`);
      return Array.from({length: dv}, (_, c) => html("td", {"data-name": `o${i + 1}_${c + 1}`}, tr));
    });
  },

  compute(s, data) {
    const source = s.wiring === "self" ? data.X : data.Y.slice(0, s.T_k);
    const Q = matmul(data.X, data.W_Q);   // (T_q, d_model) @ (d_model, d_k)
    const K = matmul(source, data.W_K);   // (T_k, d_model) @ (d_model, d_k)
    const V = matmul(source, data.W_V);   // (T_k, d_model) @ (d_model, d_v)
    return attention(Q, K, V);
  },

  disabled(s) { return {T_k: s.wiring === "self"}; },

  draw(ctx, s, r) {
    const data = ctx.data, Tk = r.S[0].length, letter = s.wiring === "self" ? "x" : "y";
    const cell = ctx.cell, shift = (data.T_k_max - Tk) * cell / 2;   // centre the T_k columns in their slot
    for (const name of ["S", "W"]) {
      const {g, frame, axis, x0} = ctx.panels[name];
      g.setAttribute("transform", `translate(${shift} 0)`);
      frame.setAttribute("width", Tk * cell);
      axis.setAttribute("x", x0 + Tk * cell / 2);
      ctx.titles[name].setAttribute("x", x0 + Tk * cell / 2);
    }
    const colour = (lut, v, lo, hi) => lut[Math.max(0, Math.min(lut.length - 1, Math.round((v - lo) / (hi - lo) * (lut.length - 1))))];
    for (const [name, M, lut, lo, hi] of [["S", r.S, data.viridis, -data.s_lim, data.s_lim], ["W", r.W, data.cividis, 0, 1]]) {
      ctx.grid[name].forEach((row, i) => row.forEach((rect, j) => {
        if (j < Tk) {
          rect.setAttribute("fill", colour(lut, M[i][j], lo, hi));
          rect.style.display = "";
          rect.dataset.value = String(M[i][j]);
          rect.firstChild.textContent = `${name === "S" ? "score" : "weight"} of q${i + 1} for ${letter}${j + 1}: ${sig(M[i][j], 4)}`;
        } else {
          rect.style.display = "none";
          delete rect.dataset.value;
          rect.firstChild.textContent = "";
        }
      }));
      ctx[`keys${name}`].forEach((t, j) => { t.textContent = j < Tk ? `${letter}${j + 1}` : ""; });
      ctx.titles[name].textContent = `${name === "S" ? "scores QKᵀ/√dₖ" : "weights"}  ${data.T_q}×${Tk}`;
    }
    ctx.grid.O.forEach((row, i) => row.forEach((rect, c) => {
      rect.setAttribute("fill", colour(data.viridis, r.O[i][c], data.v_min, data.v_max));
      rect.dataset.value = String(r.O[i][c]);
      rect.firstChild.textContent = `output o${i + 1}, feature ${c + 1}: ${sig(r.O[i][c], 4)}`;
      setNum(ctx.cells[i][c], r.O[i][c], 3);
    }));
    ctx.suptitle.textContent = s.wiring === "self" ? `self-attention: Q, K, V all from X (T = ${data.T_q})`
      : `cross-attention: Q from X (${data.T_q} queries); K, V from Y (Tₖ = ${Tk})`;
  },

  describe(s, r, data) {
    const Tk = r.S[0].length;
    return (s.wiring === "self" ? `Self-attention: queries, keys and values all come from X, ${data.T_q} tokens. `
      : `Cross-attention: queries from X (${data.T_q} tokens), keys and values from ` +
        `${Tk === 1 ? "the first token" : `the first ${Tk} tokens`} of Y. `) +
      `The score and weight matrices are ${data.T_q}×${Tk}, each weight row sums to 1; the output is ` +
      `${data.T_q}×${data.d_v} whatever the number of keys.`;
  },
};
