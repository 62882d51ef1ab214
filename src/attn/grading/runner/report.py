"""The class report: per item, the share correct and the commonest mistakes in words, as one HTML page with a plot.

Written next to grades.csv/json (``STEM.html``), self-contained (the plot is
an embedded PNG), readable without the grader installed.
"""
from __future__ import annotations

import base64
import html
import io
from collections import Counter, defaultdict
from pathlib import Path

GENERIC = {
    "raised": "the code raised an error", "timeout": "ran past its time limit", "shape": "wrong shape",
    "type": "not the kind of answer asked for", "nan": "NaN in the answer", "inf": "infinity in the answer",
    "text": "text instead of numbers", "columns": "normalised down columns instead of rows",
    "rows": "rows do not sum to 1", "sign": "wrong sign", "transpose": "transposed", "rounding": "rounded too far",
    "checker": "the checker failed (not the learner's mistake)", "factor": "off by a constant factor",
    "rows_sum": "rows of weights do not sum to 1", "value": "a wrong value (no known mistake matches)",
    "tuple": "several values (a tuple) instead of one array", "float16": "float16 results (3 digits)", "ragged": "rows of different lengths",
}


def mistake_words(item_id: str, key: str) -> str:
    """A mistake key in words: the item's own declaration when there is one."""
    try:
        from ..items import get_item

        for part in get_item(item_id).parts:
            for m in part.mistakes:
                if m.key == key:
                    return m.hint
    except KeyError:
        pass
    return GENERIC.get(key, key.replace("_", " "))


def _plot(items: list, share: dict, counts: dict) -> str:
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(items) + 1.5), 3.2), dpi=110)
    ax.bar(items, [100 * share[i] for i in items], color="#35608d")
    for x, i in enumerate(items):
        ax.text(x, 100 * share[i] + 2, f"{counts[i]}", ha="center", fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_ylabel("learners correct (%)")
    ax.set_title("Share of learners with the item fully correct (number of learners above each bar)", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def write_html(rows: list, path: Path) -> Path:
    from ..items import items as all_items

    known = {it.id for it in all_items()}  # a row for an id that is no item (an old journal's) is not an item here
    graded = [r for r in rows if r.get("item") in known and r["status"] in ("correct", "not yet", "not tried", "error")]
    by_item: dict[str, list] = defaultdict(list)
    for r in graded:
        by_item[r["item"]].append(r)
    items = sorted(by_item)
    share = {i: sum(r["status"] == "correct" for r in by_item[i]) / len(by_item[i]) for i in items}
    counts = {i: len(by_item[i]) for i in items}
    esc = html.escape
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Class report</title>",
             "<style>:root{color-scheme:light dark}body{font-family:sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
             "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.3rem .5rem;text-align:left;"
             "vertical-align:top}</style></head><body><h1>Class report</h1>"]
    if items:
        parts.append(f"<img alt='Bar chart: share of learners with each item fully correct: "
                     f"{esc(', '.join(f'{i} {100 * share[i]:.0f}%' for i in items))}' "
                     f"src='data:image/png;base64,{_plot(items, share, counts)}'>")
        parts.append("<h2>Items</h2><table><tr><th>Item</th><th>Learners</th><th>Correct</th>"
                     "<th>Commonest mistakes</th></tr>")
        for i in items:
            mistakes = Counter(k for r in by_item[i] for k in r["mistakes"].split())
            top = "".join(f"<li>{n} × {esc(mistake_words(i, k))} <code>{esc(k)}</code></li>"
                          for k, n in mistakes.most_common(3))
            title = esc(by_item[i][0].get("title", ""))
            parts.append(f"<tr><td>{esc(i)} {title}</td><td>{counts[i]}</td><td>{100 * share[i]:.0f}%</td>"
                         f"<td><ul>{top}</ul></td></tr>")
        parts.append("</table>")
    other = [r for r in rows if r not in graded or r.get("flags")]
    if other:
        parts.append("<h2>Files to look at</h2><table><tr><th>Learner</th><th>File</th><th>Status</th>"
                     "<th>Flags</th><th>Message</th></tr>")
        for r in other:
            parts.append(f"<tr><td>{esc(str(r['learner']))}</td><td>{esc(str(r['file']))}</td>"
                         f"<td>{esc(str(r['status']))}</td><td>{esc(str(r.get('flags', '')))}</td>"
                         f"<td>{esc(str(r['message'])[:300])}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    path.write_text("".join(parts), encoding="utf-8", errors="backslashreplace")
    return path
