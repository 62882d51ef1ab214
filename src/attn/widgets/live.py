"""The live explorer: one anywidget that runs in JupyterLab and, without a kernel, on the built web page.

Each explorer declares its controls once (``Explorer.live_controls``, a list of :class:`Control`) and
its data once (``Explorer.live_data``). The widget sends both to a small ES module
(``js/common.js`` + ``js/<explorer>.js``) that draws plain SVG, computes the numbers in float64 and
redraws on every input, in the reader's browser. In JupyterLab the module then hands the new state to
Python (``state`` trait), where the explorer recomputes it with ``attn`` (``explorer.result`` etc.
stay readable) and answers with ``seen`` = the state's serial number. On the static page myst-nb
saves the widget's state (its ``_esm`` included); the vendored anywidget front end renders it and
nothing waits for a kernel. Why anywidget: docs/live-explorers.md.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import anywidget
import traitlets

JS = Path(__file__).with_name("js")


@dataclass(frozen=True)
class Control:
    """One control, declared once for JupyterLab and the web page.

    ``kind``: ``"range"`` (a number from ``min`` to ``max`` by ``step``), ``"log"`` (a number whose
    base-10 logarithm runs from ``min`` to ``max`` by ``step``) or ``"choice"`` (one of ``options``,
    a list of ``(label, value)``; ``ordered``: shown as a slider along them, else as a list).
    """

    name: str
    label: str
    kind: str = "range"
    min: float | None = None
    max: float | None = None
    step: float | None = None
    options: list = field(default_factory=list)
    digits: int = 1  # the readout's decimals (range)
    ordered: bool = False  # a choice along a scale (d_k, T): a slider over the options, not a list

    def __post_init__(self):
        if self.kind not in ("range", "log", "choice"):
            raise ValueError(f"kind must be 'range', 'log' or 'choice'; got {self.kind!r}")
        if self.kind == "choice" and not self.options:
            raise ValueError(f"control {self.name!r}: a choice needs options")
        if self.kind != "choice" and (self.min is None or self.max is None or self.step is None):
            raise ValueError(f"control {self.name!r}: a {self.kind} control needs min, max and step")

    def as_json(self) -> dict:
        d = asdict(self)
        d["options"] = [list(o) for o in self.options]
        return d

    def contains(self, value) -> bool:
        """Whether ``value`` is a state this control can reach (log: 10**min … 10**max)."""
        if self.kind == "choice":
            return any(value == v for _, v in self.options)
        lo, hi = (10 ** self.min, 10 ** self.max) if self.kind == "log" else (self.min, self.max)
        return lo * (1 - 1e-12) - 1e-12 <= value <= hi * (1 + 1e-12) + 1e-12


@lru_cache(maxsize=None)
def _module(script: str) -> str:
    code = (JS / "common.js").read_text(encoding="utf-8") + "\n" + (JS / script).read_text(encoding="utf-8")
    return code + "\nexport default { render };\n"


@lru_cache(maxsize=None)
def _widget_class(script: str) -> type:
    name = "Live_" + script.removesuffix(".js")
    return type(name, (LiveWidget,), {"__module__": __name__, "_esm": _module(script),
                                      "_css": (JS / "explorer.css").read_text(encoding="utf-8")})


class LiveWidget(anywidget.AnyWidget):
    """The anywidget of one explorer. ``state``: the explorer's parameters (JSON), changed by either side."""

    spec = traitlets.Dict().tag(sync=True)
    state = traitlets.Dict().tag(sync=True)
    seen = traitlets.Int(-1).tag(sync=True)  # serial of the last state Python has recomputed

    def __init__(self, explorer, **kwargs):
        self._keep = explorer  # the widget keeps its explorer alive (a cell `Explorer().widget()` holds no other reference)
        super().__init__(**kwargs)
        self.observe(self._on_state, names="state")

    @property
    def explorer(self):
        """The explorer this widget shows (None once closed)."""
        return self._keep

    def close_explorer(self) -> None:
        """Close the widget (its views go too) and clear its explorer's figure."""
        explorer, self._keep = self._keep, None
        self.close()
        if explorer is not None:
            explorer.close()

    def _on_state(self, change):
        state = dict(change["new"])
        serial = state.pop("serial", None)
        if serial is None or self._keep is None:
            return  # a state Python set itself, or a closed widget
        self._keep.set_live_state(state)
        self.seen = int(serial)


_shown: dict[Any, LiveWidget] = {}  # cell -> the widget it showed last (closed when the cell runs again)


def _cell_key(explorer) -> Any:
    """The running cell (JupyterLab sends its id), else the cell's source; None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return None
    ip = get_ipython()
    if ip is None:
        return None
    kernel = getattr(ip, "kernel", None)
    header = {}
    if kernel is not None:
        try:
            header = kernel.get_parent().get("metadata", {}) or {}
        except Exception:  # noqa: BLE001 - older ipykernel: fall back to the source
            header = {}
    cell = header.get("cellId")
    if cell is None:
        history = ip.user_ns.get("In") or [""]
        cell = history[-1]
    return (type(explorer).__name__, cell)


def make_widget(explorer) -> LiveWidget:
    """The live widget of ``explorer``; a widget the same cell showed before is closed (memory stays flat)."""
    cls = _widget_class(explorer.live_script)
    spec = {"name": explorer.live_script.removesuffix(".js"), "title": explorer.live_title,
            "width": explorer.live_size[0], "height": explorer.live_size[1],
            "controls": [c.as_json() for c in explorer.live_controls], "data": explorer.live_data()}
    widget = cls(explorer, spec=_jsonable(spec), state=_jsonable(explorer.live_state()))
    key = _cell_key(explorer)
    if key is not None:
        old = _shown.pop(key, None)
        if old is not None:
            old.close_explorer()
        _shown[key] = widget
    return widget


_TEX = {r"\tau": "τ", r"\sqrt": "√", r"\cdot": "·", r"\top": "ᵀ", "{": "", "}": "", "$": "", "\\": ""}
_SUB = str.maketrans("0123456789aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUB_CHARS = "0-9aehijklmnoprstuvx"  # the characters Unicode has subscripts for


def plain_text(label: str) -> str:
    """A matplotlib mathtext label as plain Unicode for SVG text: ``$k_{1}$`` -> ``k₁``, ``$\\tau=1$`` -> ``τ=1``,
    ``$d_k$`` -> ``dₖ``. A subscript Unicode cannot write (``x_F``) keeps its underscore."""
    import re

    s = re.sub(rf"_(?:\{{([{_SUB_CHARS}]+)\}}|([{_SUB_CHARS}]))", lambda m: (m.group(1) or m.group(2)).translate(_SUB),
               label)
    for tex, text in _TEX.items():
        s = s.replace(tex, text)
    return s


def colour_table(name: str, n: int = 64) -> list[str]:
    """``n`` colours of the matplotlib colour map ``name`` as ``#rrggbb``, low to high (the page's heatmaps)."""
    import matplotlib
    from matplotlib.colors import to_hex

    cmap = matplotlib.colormaps[name]
    return [to_hex(cmap(i / (n - 1))) for i in range(n)]


def live_json(value):
    """``value`` as plain JSON types (NumPy arrays and scalars to lists and numbers)."""
    return _jsonable(value)


def _jsonable(value):
    """Plain JSON types (NumPy arrays and scalars to lists and floats), checked by a round trip."""
    import numpy as np

    def conv(v):
        if isinstance(v, dict):
            return {str(k): conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [conv(x) for x in v]
        if isinstance(v, np.ndarray):
            return conv(v.tolist())
        if isinstance(v, np.generic):
            return v.item()
        return v

    out = conv(value)
    json.dumps(out, allow_nan=False)
    return out
