"""(d) Widget updates: each explorer's ``update(**params)`` against a new figure per call, in the same run.

Discovery is generic: every module under ``attn.widgets`` is imported and every
concrete class with an ``update`` method, a ``defaults`` dict and a ``fig`` is
benchmarked. ``EXPECTED`` lists the explorers the book plans, so that one not
written yet is reported as missing instead of silently absent; ``SWEEPS`` can
give an explorer a hand-made sweep. Otherwise the sweep comes from the
explorer's own ``controls()`` (each slider from min to max, each option of a
dropdown or toggle), one parameter at a time, the others at their defaults.

Both ways end with the figure's pixels up to date on an Agg canvas:
- update: ``explorer.update(**params)``, which sets the artists' data and renders once by
  blitting the changed artists over the saved static background (an explorer without a
  ``render`` method is given one full render);
- naive: ``type(explorer)(**explorer.params)`` (a new figure and new artists, as
  ``interact`` examples do) and one full render.
Apart from both, ``png ms`` is the time to encode the updated pixels as the PNG the live
widget sends to the page (``explorer.png()``).
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import time
from typing import Any, Callable

import numpy as np

from .timing import summary

#: (module under attn.widgets, class name) that the book's pages use or plan; missing ones are reported
EXPECTED = [
    ("weighted_average", "WeightedAverageExplorer"),  # Proposition 1
    ("wiring", "WiringExplorer"),  # Proposition 4
]
#: class name -> list of parameter dicts, one per frame (overrides the sweep read from controls())
SWEEPS: dict[str, list[dict[str, Any]]] = {}
FRAMES = 40
QUICK_FRAMES = 6
GOAL_MEDIAN_MS = 20.0
GOAL_RATIO = 3.0


def _agg() -> None:
    # in this process only: an MPLBACKEND in os.environ would pass on to every child, the book's kernels included
    # (the tests' book build then drew no figure at all)
    import matplotlib

    matplotlib.use("Agg")


def _render(fig) -> None:
    """One full Agg render of ``fig`` (the figure gets an Agg canvas if it has none)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()


def discover() -> tuple[list[tuple[str, type]], list[dict]]:
    """(name, class) of every explorer found under attn.widgets, and notes on missing or broken ones."""
    notes = []
    try:
        pkg = importlib.import_module("attn.widgets")
    except Exception as exc:  # noqa: BLE001 (report anything that stops the import)
        return [], [{"widget": "attn.widgets", "skipped": f"import failed: {type(exc).__name__}: {exc}"}]
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(pkg.__path__, prefix="attn.widgets."):
        try:
            mod = importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001
            notes.append({"widget": info.name, "skipped": f"import failed: {type(exc).__name__}: {exc}"})
            continue
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and obj.__module__ == mod.__name__ and not inspect.isabstract(obj)
                    and callable(getattr(obj, "update", None)) and isinstance(getattr(obj, "defaults", None), dict)
                    and obj.defaults):
                found[f"{mod.__name__.removeprefix('attn.widgets.')}.{name}"] = obj
    for mod_name, cls_name in EXPECTED:
        if f"{mod_name}.{cls_name}" not in found:
            notes.append({"widget": f"{mod_name}.{cls_name}", "skipped": "not found (not written yet?)"})
    return sorted(found.items()), notes


def _control_values(control, n: int) -> list | None:
    opts = getattr(control, "options", None)
    if opts:
        vals = [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in opts]
        return list(vals)
    lo, hi = getattr(control, "min", None), getattr(control, "max", None)
    if lo is not None and hi is not None:
        base = getattr(control, "base", None)  # FloatLogSlider: min and max are exponents of base
        xs = base ** np.linspace(lo, hi, n) if base else np.linspace(lo, hi, n)
        if isinstance(control.value, (int, np.integer)) and not isinstance(control.value, bool):
            return sorted({int(round(x)) for x in xs})
        return [float(x) for x in xs]
    if isinstance(getattr(control, "value", None), bool):
        return [not control.value, control.value]
    return None


def sweep(explorer, frames: int = FRAMES) -> list[dict[str, Any]]:
    """One parameter at a time through its range: about ``frames`` parameter dicts."""
    name = type(explorer).__name__
    if name in SWEEPS:
        return SWEEPS[name]
    try:
        controls = explorer.controls()
    except Exception:  # noqa: BLE001 (no controls: fall back to the defaults)
        controls = {}
    params = list(explorer.defaults)
    per = max(3, frames // max(1, len(params)))
    out = []
    for p in params:
        vals = _control_values(controls[p], per) if p in controls else None
        if vals is None:
            d = explorer.defaults[p]
            if isinstance(d, bool):
                vals = [not d, d]
            elif isinstance(d, (int, float, np.number)):
                vals = [d * s for s in np.linspace(0.5, 1.5, per)] if d else list(np.linspace(-1, 1, per))
            else:
                continue
        out.extend({p: v} for v in vals)
    return out


def steps(n_widgets: int | None = None) -> int:
    return 2 * (n_widgets if n_widgets is not None else len(discover()[0]))


def bench_one(cls: type, frames: int = FRAMES, tick: Callable[[str], None] = lambda s: None) -> dict:
    _agg()
    explorer = cls()
    render = getattr(explorer, "render", None)
    if callable(render):
        render()  # warm-up: the first render lays out the figure and saves its static background
    else:
        _render(explorer.fig)
    plan = sweep(explorer, frames)
    if not plan:
        return {"skipped": "no parameters to sweep"}
    tick(f"{cls.__name__}: update")
    upd, png, states = [], [], []
    for p in plan:
        t0 = time.perf_counter()
        explorer.update(**p)  # sets the artists' data and renders once (attn's explorers blit)
        if not callable(render):
            _render(explorer.fig)
        t1 = time.perf_counter()
        if callable(getattr(explorer, "png", None)):
            explorer.png()  # what the live widget sends to the page
            png.append(time.perf_counter() - t1)
        upd.append(t1 - t0)
        states.append(dict(explorer.params) if isinstance(getattr(explorer, "params", None), dict) else p)
    tick(f"{cls.__name__}: naive")
    naive = []
    for state in states:
        t0 = time.perf_counter()
        fresh = cls(**state)  # a new figure and new artists, as `interact` examples do
        _render(fresh.fig)
        naive.append(time.perf_counter() - t0)
        del fresh
    u, n = summary(upd), summary(naive)
    row = {
        "frames": len(plan),
        "parameters": sorted({k for p in plan for k in p}),
        "update_median_ms": 1e3 * u["median_s"], "update_p95_ms": 1e3 * u["p95_s"],
        "naive_median_ms": 1e3 * n["median_s"], "naive_p95_ms": 1e3 * n["p95_s"],
        "ratio_naive_over_update": n["median_s"] / u["median_s"],
        "png_median_ms": 1e3 * summary(png)["median_s"] if png else None,
    }
    row["median_met"] = row["update_median_ms"] < GOAL_MEDIAN_MS
    row["ratio_met"] = row["ratio_naive_over_update"] >= GOAL_RATIO
    return row


def run(frames: int = FRAMES, tick: Callable[[str], None] = lambda s: None,
        found: list[tuple[str, type]] | None = None, notes: list[dict] | None = None) -> dict:
    if found is None:
        found, notes = discover()
    rows = list(notes or [])
    for name, cls in found:
        try:
            rows.append({"widget": name, **bench_one(cls, frames, tick)})
        except Exception as exc:  # noqa: BLE001 (one broken widget must not stop the others)
            rows.append({"widget": name, "skipped": f"{type(exc).__name__}: {exc}"})
    return {"goal_median_ms": GOAL_MEDIAN_MS, "goal_ratio": GOAL_RATIO, "rows": rows}
