"""The explorer pattern shared by every widget in the book."""
from __future__ import annotations

import html
import re
from abc import ABC, abstractmethod
from typing import Any, Iterable

import ipywidgets as widgets
from IPython.display import HTML, display
from matplotlib.animation import FuncAnimation
from matplotlib.figure import Figure


class Explorer(ABC):
    """A figure plus the parameters that drive it.

    Subclasses set ``controls`` (name -> ipywidgets control factory taking the
    initial value), ``defaults`` (name -> initial value), ``alt`` (what the
    figure shows, for screen readers), build their artists in ``_draw`` and
    mutate them in ``_redraw``. ``update`` never creates a figure: it changes
    the data of existing artists, so a slider move costs one redraw.
    """

    defaults: dict[str, Any] = {}
    alt: str = "An interactive figure."

    def __init__(self, figsize=(7.5, 3.6), **params):
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}")
        self.params = {**self.defaults, **params}
        # A bare Figure (not pyplot): never auto-displayed, never left open in pyplot's registry.
        self.fig = Figure(figsize=figsize, layout="constrained")
        self._draw()
        self._redraw()

    # -- for subclasses -------------------------------------------------
    @abstractmethod
    def _draw(self) -> None:
        """Create the axes and artists once."""

    @abstractmethod
    def _redraw(self) -> None:
        """Set the artists' data from ``self.params``."""

    @abstractmethod
    def controls(self) -> dict[str, widgets.Widget]:
        """name -> an ipywidgets control holding the current value."""

    # -- public ---------------------------------------------------------
    def update(self, **params) -> "Explorer":
        """Set parameters and redraw the existing artists (no new figure)."""
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}")
        previous = dict(self.params)
        self.params.update(params)
        try:
            self._redraw()
        except Exception:
            self.params = previous  # a refused value leaves the explorer as it was
            self._redraw()
            raise
        self.fig.canvas.draw_idle()
        return self

    def widget(self) -> widgets.Widget:
        """Live controls and the figure, for a running kernel (JupyterLab)."""
        out = widgets.Output()
        ctrls = self.controls()

        def show():
            with out:
                out.clear_output(wait=True)
                display(self.fig)

        def on_change(change):
            self.update(**{name: c.value for name, c in ctrls.items()})
            show()

        for c in ctrls.values():
            c.observe(on_change, names="value")
        show()
        return widgets.VBox([widgets.HBox(list(ctrls.values()), layout=widgets.Layout(flex_flow="row wrap")), out])

    def scrubber(self, name: str, values: Iterable[Any], interval: int = 400, **fixed) -> HTML:
        """A kernel-free animation stepping ``name`` through ``values`` (matplotlib's ``to_jshtml``).

        Every frame is a real redraw through ``update``; the result is plain HTML and JavaScript that
        the built book can scrub without a kernel. The frame image carries this explorer's alt text.
        """
        values = list(values)
        if not values:
            raise ValueError(f"scrubber needs at least one value of {name!r}")
        saved = dict(self.params)
        self.update(**fixed)

        def frame(value):
            self.update(**{name: value})
            return []

        anim = FuncAnimation(self.fig, frame, frames=values, interval=interval, repeat=False, blit=False)
        page = anim.to_jshtml(default_mode="once")
        self.update(**saved)
        alt = html.escape(f"{self.alt} Frames step {name} through {values[0]} … {values[-1]}.", quote=True)
        page = page.replace('<img id="', f'<img alt="{alt}" id="', 1)
        # Offline and accessible: drop matplotlib's Font Awesome stylesheet link to a CDN (the book's
        # theme ships the icons) and give the frame slider a name for screen readers.
        page = re.sub(r'<link rel="stylesheet"\s+href="https?://[^"]*font-awesome[^"]*">', "", page)
        label = html.escape(f"Frame: {name}", quote=True)
        page = page.replace('<input id="_anim_slider', f'<input aria-label="{label}" id="_anim_slider', 1)
        return HTML(page)

    def _repr_png_(self):  # lets `explorer` alone in a cell show its current figure
        import io

        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", dpi=100)
        return buf.getvalue()
