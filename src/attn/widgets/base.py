"""The explorer pattern shared by every widget in the book."""
from __future__ import annotations

import html
import io
import re
from abc import ABC, abstractmethod
from typing import Any, Iterable

import ipywidgets as widgets
import matplotlib
import numpy as np
import PIL.Image
from IPython.display import HTML
from matplotlib.artist import Artist
from matplotlib.animation import FuncAnimation
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from .glyphs import cache_glyphs
from .live import live_json


_SEEN_ONCE, _EMPTY = object(), object()  # _draw_text: a text drawn once; a text with no pixels


def vector_plane(ax, xlim=None, ylim=None) -> None:
    """Set up ``ax`` for 2-d vectors: equal aspect, faint lines through the origin, optional limits."""
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.8)
    ax.axvline(0, color="0.85", lw=0.8)
    if xlim is not None:
        ax.set(xlim=xlim, ylim=ylim if ylim is not None else xlim)


class Explorer(ABC):
    """A figure plus the parameters that drive it.

    Subclasses set ``live_controls`` (the controls, declared once: see ``attn.widgets.live``),
    ``defaults`` (name -> initial value), ``alt`` (what the
    figure shows, for screen readers), build their artists in ``_draw``, mutate
    them in ``_redraw`` and list the artists ``_redraw`` changes in ``_animated``.

    ``update`` never creates a figure. It changes the data of existing artists
    and renders once by blitting: the static part of the figure (axes, ticks,
    labels, fixed curves) is drawn once into a saved background; a move restores
    that background and draws only the changed artists over it. A subclass whose
    ``_redraw`` changes something static (limits, ticks) calls ``_invalidate``,
    and the next render is a full one.

    Text that changes with every move (a title showing τ, say) is plain Unicode,
    not mathtext: mathtext parses each new string afresh, which costs more than
    the rest of the redraw.
    """

    defaults: dict[str, Any] = {}
    alt: str = "An interactive figure."

    # The live explorer (attn.widgets.live): its controls, declared once for JupyterLab and the web page,
    # its ES module (js/<live_script>), a name for its controls, and the drawing's size in SVG units.
    live_controls: list = []
    live_script: str = ""
    live_title: str = "Explorer"
    live_size: tuple[int, int] = (900, 300)
    cache_text = True  # draw moving texts from a cache of their pixels (_draw_text); False: matplotlib draws each
    # What this explorer's controls do, for the note under it (attn.page.show_explorer): HTML, no TeX.
    live_usage: str = ""

    def __init__(self, figsize=(7.5, 3.6), **params):
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}")
        self.params = {**self.defaults, **params}
        # A bare Figure (not pyplot): never auto-displayed, never left open in pyplot's registry.
        self.fig = Figure(figsize=figsize, layout="constrained")
        FigureCanvasAgg(self.fig)
        self._deferred = False  # set_live_state: recompute the values, render later (png() will)
        self._background = None  # (renderer, width, height, saved pixels) of the static part
        self._text_cache = {}  # moving texts' pixels, by what they depend on (_draw_text)
        self._scratch = None  # a transparent canvas to draw a new text on
        self._rendered_with = None  # the renderer whose pixels show the current parameters
        self._draw()
        self._redraw()

    # -- for subclasses -------------------------------------------------
    @abstractmethod
    def _draw(self) -> None:
        """Create the axes and artists once."""

    @abstractmethod
    def compute(self) -> dict:
        """What the picture shows for the current ``self.params``, computed by ``attn``: name -> number or array.

        The one place an explorer computes: ``_redraw`` draws it, ``result`` is it and ``live_values``
        names its numbers as the page shows them."""

    @abstractmethod
    def _redraw(self) -> None:
        """Set the artists' data from ``self.compute()``."""

    def controls(self) -> dict[str, widgets.Widget]:
        """name -> an ipywidgets control holding the current value, made from ``live_controls`` (the one
        declaration of the explorer's ranges; used by ``png_widget`` and the benchmarks' sweeps)."""
        state = self.live_state()
        out = {}
        for c in self.live_controls:
            v = state[c.name]
            if c.kind == "log":
                w = widgets.FloatLogSlider(value=v, base=10, min=c.min, max=c.max, step=c.step, description=c.label,
                                           readout_format=".3g")
            elif c.kind == "range" and c.digits == 0 and float(c.step).is_integer():
                w = widgets.IntSlider(value=int(v), min=int(c.min), max=int(c.max), step=int(c.step), description=c.label)
            elif c.kind == "range":
                w = widgets.FloatSlider(value=v, min=c.min, max=c.max, step=c.step, description=c.label,
                                        readout_format=f".{c.digits}f")
            else:
                plain = all(label == str(value) for label, value in c.options)
                options = [value for _, value in c.options] if plain else [tuple(o) for o in c.options]
                if c.ordered:  # a scale (d_k, T): redraw when the slider is released
                    w = widgets.SelectionSlider(options=options, value=v, description=c.label, continuous_update=False)
                else:
                    w = widgets.Dropdown(options=options, value=v, description=c.label)
            out[c.name] = w
        return out

    def _animated(self) -> list[Artist]:
        """The artists ``_redraw`` changes, in drawing order (drawn over the static background)."""
        return []

    def _invalidate(self) -> None:
        """Something static changed: the next render redraws the whole figure."""
        self._background = None
        self._rendered_with = None

    # -- public ---------------------------------------------------------
    def update(self, **params) -> "Explorer":
        """Set parameters, redraw the changed artists and render once (no new figure)."""
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
        self.render()
        live = getattr(self, "_live", None)
        if live is not None and not self._deferred and live.explorer is self:
            live.state = live_json(self.live_state())  # a move made in Python: the live explorer follows it
        return self

    def render(self) -> None:
        """Bring the figure's Agg pixels up to date: blit the changed artists over the saved background."""
        if self._deferred:
            self._rendered_with = None  # png() renders when asked
            return
        canvas = self.fig.canvas
        dynamic = self._animated()
        renderer = canvas.get_renderer()
        cache_glyphs(renderer)
        bg = self._background
        if not dynamic or bg is None or bg[0] is not renderer or bg[1:3] != canvas.get_width_height():
            self._draw_background(dynamic)
        if dynamic:
            canvas.restore_region(self._background[3])
            for artist in dynamic:
                if not artist.get_visible():
                    continue
                if self.cache_text and type(artist) is Text and artist.get_bbox_patch() is None:  # not an Annotation's arrow
                    self._draw_text(artist, renderer)
                else:
                    self.fig.draw_artist(artist)
        self._rendered_with = canvas.get_renderer()

    def _draw_text(self, text: Text, renderer) -> None:
        """Draw a moving text from a cache of its pixels: laying text out and drawing its glyphs is most of a
        move's time on matplotlib >= 3.11, and most texts of a move are the same as before (or as a move ago).

        The key is everything the pixels depend on (string, anchor in pixels, font, colour, alignment,
        rotation, clip). A text seen for the first time is drawn as usual; seen again unchanged, it is
        drawn once more on a transparent scratch canvas and its box of pixels kept and pasted from then on.
        """
        s = text.get_text()
        if not s:
            return
        clip = text.get_clip_box()
        key = (s, tuple(text.get_transform().transform(text.get_unitless_position())), hash(text.get_fontproperties()),
               str(text.get_color()), text.get_alpha(), text.get_ha(), text.get_va(), text.get_rotation(),
               text.get_linespacing(), text.get_usetex(), text.get_clip_on(), clip.bounds if clip is not None else None,
               renderer.dpi)
        cache = self._text_cache
        pixels = cache.get(key)
        if pixels is None:  # new: drawn as usual (a text that changes on every move never costs more)
            if len(cache) > 2000:
                cache.clear()
            cache[key] = _SEEN_ONCE
            self.fig.draw_artist(text)
            return
        if pixels is _SEEN_ONCE:  # drawn again unchanged: worth keeping its pixels
            pixels = cache[key] = self._text_pixels(text, renderer)
        if pixels is not _EMPTY:
            x, y, rgba = pixels
            gc = renderer.new_gc()
            renderer.draw_image(gc, x, y, rgba)
            gc.restore()
        text.stale = False

    def _text_pixels(self, text: Text, renderer):
        """(left, bottom, RGBA rows bottom first) of ``text`` drawn alone on a transparent canvas like ``renderer``."""
        from matplotlib.backends.backend_agg import RendererAgg

        scratch = self._scratch
        if scratch is None or (scratch.width, scratch.height, scratch.dpi) != (renderer.width, renderer.height, renderer.dpi):
            scratch = self._scratch = RendererAgg(renderer.width, renderer.height, renderer.dpi)
            cache_glyphs(scratch)
        scratch.clear()
        text.draw(scratch)
        box = text.get_window_extent(scratch)
        H, W = int(scratch.height), int(scratch.width)
        x0, x1 = max(0, int(box.x0) - 3), min(W, int(box.x1) + 4)
        y0, y1 = max(0, int(box.y0) - 3), min(H, int(box.y1) + 4)
        if x1 <= x0 or y1 <= y0:
            return _EMPTY
        rgba = np.asarray(scratch.buffer_rgba())[H - y1:H - y0, x0:x1][::-1].copy()  # rows bottom first, as Agg's draw_image reads them
        return x0, y0, rgba

    def _draw_background(self, dynamic: list[Artist]) -> None:
        canvas = self.fig.canvas
        if self.fig.get_layout_engine() is not None:
            # Lay the figure out once, with everything in it, then keep that layout: a moving
            # label must not make the axes jump, and re-solving the layout per move is slow.
            canvas.draw()
            self.fig.set_layout_engine("none")
        if dynamic:
            # Hidden, not just animated: Axes.draw still composites animated images into the background.
            # Axes.draw also moves each title above whatever it measures; a hidden title measures as
            # an empty box and would be sent off the figure, so text positions are put back after.
            shown = [artist.get_visible() for artist in dynamic]
            placed = [(artist, artist.get_position()) for artist in dynamic if isinstance(artist, Text)]
            for artist in dynamic:
                artist.set_visible(False)
            try:
                canvas.draw()
            finally:
                for artist, visible in zip(dynamic, shown):
                    artist.set_visible(visible)
                for artist, position in placed:
                    artist.set_position(position)
            self._background = (canvas.get_renderer(), *canvas.get_width_height(),
                                canvas.copy_from_bbox(self.fig.bbox))
        else:
            canvas.draw()

    def png(self) -> bytes:
        """The current figure as PNG bytes, from the rendered pixels (no second render after ``update``)."""
        if self._rendered_with is not self.fig.canvas.get_renderer():  # never rendered, or a savefig since
            self.render()
        canvas = self.fig.canvas
        buf = io.BytesIO()
        PIL.Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
            buf, format="png", compress_level=1)
        return buf.getvalue()

    # -- the live explorer (JupyterLab and the web page) ------------------
    def live_data(self) -> dict:
        """Everything the ES module needs besides the state (fixed vectors, measured data), as JSON."""
        return {}

    def live_state(self) -> dict:
        """The current parameters as the ES module's state (JSON)."""
        return dict(self.params)

    def set_live_state(self, state: dict) -> None:
        """A state the page sent: validate and recompute it with ``attn`` (no rendering: the page has drawn)."""
        self._deferred = True
        try:
            self.update(**{k: state[k] for k in self.defaults if k in state})
        finally:
            self._deferred = False

    def live_values(self) -> dict[str, float]:
        """The numbers the page shows for the current state, by their ``data-name``, read from ``compute()``."""
        return {}

    @property
    def result(self) -> dict:
        """What the picture shows now (``compute()`` for the current parameters), e.g. after a move in the page."""
        return self.compute()

    def widget(self):
        """The live explorer (anywidget): drawn and computed in the browser, in JupyterLab and on the web page.

        Moving a control redraws at once in the browser; Python then learns the new state and
        recomputes it (``explorer.params``, ``explorer.result``). Running the same cell again closes
        the widget it showed before.
        """
        from .live import make_widget

        self._live = make_widget(self)
        return self._live

    def close(self) -> None:
        """Drop the figure's pixels and artists (a closed live widget calls this)."""
        self._live = None
        self.fig.clear()
        self._background = None
        self._rendered_with = None

    def png_widget(self) -> widgets.Widget:
        """Controls and a PNG of the matplotlib figure, redrawn by the kernel (the earlier JupyterLab widget).

        The figure is an ``ipywidgets.Image`` whose PNG is replaced on each move: no output area
        is cleared, so the picture does not flicker.
        """
        ctrls = self.controls()
        # No `tooltip` on the Image: its view fails to render with one (ipywidgets 8's ImageView has no
        # description to put it on). The alt text goes in a folded note under the picture instead.
        image = widgets.Image(value=self.png(), format="png", layout=widgets.Layout(max_width="100%", height="auto"))
        about = widgets.HTML(f"<details><summary>What the figure shows</summary>{html.escape(self.alt)}</details>")

        def on_change(change):
            self.update(**{name: c.value for name, c in ctrls.items()})
            image.value = self.png()

        for c in ctrls.values():
            c.observe(on_change, names="value")
        return widgets.VBox([widgets.HBox(list(ctrls.values()), layout=widgets.Layout(flex_flow="row wrap")),
                             image, about])

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
        with matplotlib.rc_context({"savefig.dpi": "figure"}):  # frames at the figure's own size
            page = anim.to_jshtml(default_mode="once")
        # FuncAnimation waits for the canvas's next draw to start playing (replaying frame 0 into this
        # explorer); it never should: the animation lives on in the HTML only.
        self.fig.canvas.mpl_disconnect(getattr(anim, "_first_draw_id", -1))
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
        return self.png()
