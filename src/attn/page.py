"""What the book's pages share: the idioms every chapter and exercise page would otherwise repeat.

- :func:`glue_values`: glue computed numbers for the prose (``{glue:text}`name:.2f```);
- :func:`agreement`, :func:`upper_bound`, :func:`lower_bound`: how closely two computations agree ("exactly",
  "to within 3e-16"), and a bound written so that it is never below (or, for a lower bound, never above) what it
  bounds;
- :func:`show_explorer`: a live explorer and the note on using it ("move it yourself");
- :func:`print_error`, :func:`print_folded`, :func:`print_signature`: a caught error, a long line, or a
  function's signature, printed folded to the text column (:data:`PRINT_WIDTH` characters);
- :func:`format_row`: a row of numbers, each to the same number of significant digits;
- :func:`figure_text_px`: how tall the smallest text of a figure is on the page, to check it is readable.

Imports only the standard library and NumPy at module level; myst-nb and IPython are imported inside
the functions that need them, so ``import attn.page`` stays light.
"""
from __future__ import annotations

import inspect
import re
import textwrap
from decimal import Decimal, InvalidOperation

import numpy as np

__all__ = ["FIGURE_COLUMN_PX", "MIN_FIGURE_TEXT_PX", "PRINT_WIDTH", "agreement", "explorer_note_html",
           "figure_text_px", "fold", "format_row", "glue_values", "lower_bound", "plain_value", "print_error", "print_folded",
           "print_signature", "show_explorer", "upper_bound"]

# The characters of a printed line that fit the book's text column at 1280 px (a code cell's output is a
# monospace block about 688 px wide; tests/browser/test_pages.py checks that no output is wider).
PRINT_WIDTH = 78

# A figure is shown at most as wide as the text column at 1280 px (CSS pixels, measured in the built book; a wider
# PNG is scaled down to it), and its smallest text should be at least MIN_FIGURE_TEXT_PX tall there to be read
# without zooming.
FIGURE_COLUMN_PX = 672
MIN_FIGURE_TEXT_PX = 10.0

# A short bracketed group, such as a shape "(5, 6)" or a pair "(3, 4)", is kept on one line when a text is folded.
_SHORT_GROUP = re.compile(r"[(\[][^()\[\]\n]{0,18}[)\]]")
_KEEP = "\x00"  # stands for a space inside such a group while textwrap folds the text

# A glued name is used inside a role, {glue:text}`name:.2f`: no colon, backtick or space.
_GLUE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


def plain_value(value):
    """Return ``value`` with NumPy numbers made plain Python numbers, everything else unchanged.

    A NumPy scalar (``np.float32``, ``np.int64``, ``np.bool_``, ...) or a 0-d array becomes the
    Python ``float``, ``int``, ``bool`` or ``complex`` of the same value (``.item()``: float16 and
    float32 widen exactly to a Python float). Python numbers, strings, ``IPython.display`` objects,
    figures and arrays of one or more dimensions are returned as they are: a Python ``int`` stays
    an ``int`` (it is never turned into a float), so a glued count prints as ``7``, not ``7.0``.
    """
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value


def fold(text: str, width: int = PRINT_WIDTH, indent: str = "    ") -> str:
    """``text`` folded at spaces into lines of at most ``width`` characters, continuation lines indented by ``indent``.

    A short bracketed group, such as the shape ``(5, 6)`` or the pair ``(3, 4)``, is never cut at its inner
    space: "(3," at the end of one line and "4)" on the next would hide what it is. A word longer than a line
    (a group included) is cut, so that no line is wider than ``width``. Raises ``ValueError`` if ``width`` is
    below 20 or ``indent`` leaves fewer than 10 characters.
    """
    if width < 20:
        raise ValueError(f"width must be at least 20 characters, got {width!r}")
    if width - len(indent) < 10:
        raise ValueError(f"indent of {len(indent)} characters leaves too little of a {width}-character line")
    kept = _SHORT_GROUP.sub(lambda m: m.group(0).replace(" ", _KEEP), text)
    folded = textwrap.fill(kept, width, subsequent_indent=indent, break_on_hyphens=False)
    return folded.replace(_KEEP, " ")


def print_folded(text: str, width: int = PRINT_WIDTH, indent: str = "    ") -> str:
    """Print ``text`` folded by :func:`fold` (at spaces, short bracketed groups kept whole); return the printed text."""
    folded = fold(text, width, indent)
    print(folded)
    return folded


def print_error(err: BaseException, prefix: str = "", width: int = PRINT_WIDTH) -> str:
    """Print ``prefix`` and the caught ``err`` as "TypeName: message", folded to ``width`` characters.

    An error message is one long sentence; folded at spaces (:func:`fold`: a shape such as ``(5, 6)`` stays on
    one line), with the continuation lines indented, it reads in the column instead of behind a horizontal
    scroll bar. Returns the printed text. Raises ``ValueError`` if ``width`` is below 20.
    """
    return print_folded(f"{prefix}{type(err).__name__}: {err}", width)


def format_row(row, digits: int = 6) -> str:
    """The entries of ``row`` (any shape, read in order) to ``digits`` significant digits, in e-notation, as
    ``"[8.80371e-01  1.19202e-01  2.95401e-04]"``: the same format for every entry, so that rows printed one under
    another line up and a rounding in the last digits shows (no entry is cut to a fixed number of decimals).
    float16 and float32 entries are widened exactly to float64 first. Raises ``ValueError`` if ``digits`` < 1.
    """
    if digits < 1:
        raise ValueError(f"format_row(): digits must be at least 1, got {digits!r}")
    entries = np.asarray(row).ravel()
    return "[" + "  ".join(f"{float(entry):.{digits - 1}e}" for entry in entries) + "]"


def print_signature(f, prefix: str = "attn.", width: int = PRINT_WIDTH) -> str:
    """Print ``f``'s call signature as ``prefix + name(parameters) -> return``, folded between parameters.

    Lines are at most ``width`` characters unless one parameter alone is longer; continuation lines
    line up under the first parameter. Returns the printed text. Raises ``TypeError`` (from
    :func:`inspect.signature`) if ``f`` has no signature.
    """
    try:  # annotations as the reader writes them (float | None), not as the strings of postponed evaluation
        sig = inspect.signature(f, eval_str=True)
    except (NameError, SyntaxError, TypeError, AttributeError):
        sig = inspect.signature(f)
    head = f"{prefix}{f.__name__}("
    returns = "" if sig.return_annotation is sig.empty else f" -> {inspect.formatannotation(sig.return_annotation)}"
    pieces = [str(p) for p in sig.parameters.values()]
    pieces = [p + ", " for p in pieces[:-1]] + [(pieces[-1] if pieces else "") + ")" + returns]
    lines, line = [], head
    for piece in pieces:
        if len(line) + len(piece.rstrip()) > width and line != head:
            lines.append(line.rstrip())
            line = " " * len(head)
        line += piece
    text = "\n".join([*lines, line])
    print(text)
    return text


def glue_values(**values):
    """Glue each keyword argument under its name, with nothing shown where the cell runs.

    ``glue_values(p3_ratio=r, n_cases=len(cases))`` is ``myst_nb.glue(name, value, display=False)``
    for each name, in the order given, after :func:`plain_value`; the page shows the value with
    ``{glue:text}`name:.2f``` (or ``{glue:md}``, ``{glue:figure}``). Names that are not Python
    identifiers (built in a loop) go in through a dict: ``glue_values(**{f"w{j}": w[j]})``.

    Raises
    ------
    TypeError
        If no values are given (a call that glues nothing is a mistake in the page).
    ValueError
        If a name is not usable in a ``{glue:...}`` role: it must start with a letter or ``_``
        and hold only letters, digits, ``_`` and ``-`` (no colon, backtick or space); the message
        names the offending name.

    Source: myst-nb's ``glue`` (https://myst-nb.readthedocs.io/en/latest/render/glue.html).
    """
    if not values:
        raise TypeError("glue_values() needs at least one name=value to glue")
    for name in values:
        if not _GLUE_NAME.match(name):
            raise ValueError(
                f"glue_values(): name {name!r} cannot be used in a {{glue:...}} role; use letters, "
                "digits, '_' and '-', starting with a letter or '_'")
    from myst_nb import glue  # the notebook engine, only where a page runs

    for name, value in values.items():
        glue(name, plain_value(value), display=False)


def upper_bound(value, fmt: str = ".0e") -> str:
    """``value`` written with the format spec ``fmt``, rounded *up*: the number shown is never below ``value``.

    ``upper_bound(2.2e-16)`` is ``"3e-16"`` where ``f"{2.2e-16:.0e}"`` is ``"2e-16"``, so a sentence such as
    "below {...}" or "to within {...}" stays true of the number it bounds. A value the format already shows
    exactly (or rounds up) is formatted as ``fmt`` does; otherwise the last digit shown is raised by one.

    Raises
    ------
    ValueError
        If ``value`` is not finite, or ``fmt`` does not write a plain number (such as ``"%"`` or ``","``).
    """
    value = float(plain_value(value))
    if not np.isfinite(value):
        raise ValueError(f"upper_bound(): value must be finite, got {value!r}")
    text = f"{value:{fmt}}"
    try:
        shown = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"upper_bound(): fmt {fmt!r} does not write a plain number ({text!r})") from None
    while float(shown) < value:
        # one unit of the last digit shown: "2e-16" -> 1e-16, "2.2e-16" -> 1e-17, "0.01" -> 0.01
        shown += Decimal(1).scaleb(shown.as_tuple().exponent)
        text = f"{float(shown):{fmt}}"
        shown = Decimal(text)
    return text


def lower_bound(value, fmt: str = ".0e") -> str:
    """``value`` written with the format spec ``fmt``, rounded *down*: the number shown is never above ``value``.

    For a sentence such as "never less than {...}" or "at least {...}": ``lower_bound(0.99959, ".3f")`` is
    ``"0.999"``, where ``f"{0.99959:.3f}"`` is ``"1.000"``, which is above the value it should bound. A value the
    format already shows exactly (or rounds down) is formatted as ``fmt`` does. The mirror image of
    :func:`upper_bound`, with its errors.
    """
    value = float(plain_value(value))
    if not np.isfinite(value):
        raise ValueError(f"lower_bound(): value must be finite, got {value!r}")
    text = upper_bound(-value, fmt)
    return text[1:] if text.startswith("-") else ("-" + text if float(text) != 0 else text)


def as_math(text):
    """``text`` as Markdown to glue, every number in e-notation written as math: ``"to within 3e-16"`` becomes
    ``"to within $3\\times10^{-16}$"`` (and ``1e-05`` becomes ``$10^{-5}$``), so no sentence shows a computer's
    exponent. Returns an ``IPython.display.Markdown``; glue it with ``{glue:md}`` (``:format: myst``)."""
    import re

    from IPython.display import Markdown

    def tex(m):
        mantissa, power = m.group(1), f"10^{{{int(m.group(2))}}}"
        return f"${power}$" if mantissa == "1" else rf"${mantissa}\times{power}$"
    return Markdown(re.sub(r"(-?\d+(?:\.\d+)?)e([+-]?\d+)", tex, str(text)))


def agreement(gap, fmt: str = ".0e") -> str:
    """Words for how closely two computations agree, to be glued into a sentence such as "they agree {...}".

    ``agreement(0.0)`` is ``"exactly"``; ``agreement(2.2e-16)`` is ``"to within 3e-16"``: ``fmt`` formats the
    gap rounded up (:func:`upper_bound`), so the bound printed is never smaller than the difference it bounds.
    A reader sees "exactly" where the difference is 0, never "0.0e+00".

    Raises
    ------
    ValueError
        If ``gap`` is negative or not finite (a difference is reported as a size, ``abs(a - b).max()``).
    """
    gap = float(plain_value(gap))
    if not np.isfinite(gap) or gap < 0:
        raise ValueError(f"agreement(): gap must be a finite size >= 0, got {gap!r}")
    return "exactly" if gap == 0 else f"to within {upper_bound(gap, fmt)}"

def figure_text_px(fig, column_px: float = FIGURE_COLUMN_PX) -> dict[str, float]:
    """How tall each visible text of a matplotlib ``fig`` is on the page, in CSS pixels: ``{text: px}``.

    The book saves a figure as a PNG of ``fig.dpi`` pixels per inch and shows it at its own size, or scaled
    down to the text column (``column_px`` wide at 1280 px) when it is wider; a text of ``s`` points is then
    ``s * dpi / 72 * min(1, column_px / width)`` pixels tall. Titles, axis labels, tick labels, legends,
    colour bars and annotations are all counted; empty and hidden texts are not. A page asserts
    ``min(figure_text_px(fig).values()) >= MIN_FIGURE_TEXT_PX`` under its figure, so that a wide figure with
    small type (a row of panels shrunk into the column) fails where it is drawn. Returns ``{}`` for a
    figure with no text.
    """
    from matplotlib.text import Text  # only where a page draws

    width_px = float(fig.get_size_inches()[0] * fig.dpi)
    scale = fig.dpi / 72 * min(1.0, column_px / width_px)
    sizes = {}
    for text in fig.findobj(Text):
        label = text.get_text().strip()
        if label and text.get_visible() and (text.axes is None or text.axes.get_visible()):
            px = float(text.get_fontsize()) * scale
            sizes[label] = min(px, sizes.get(label, px))
    return sizes


EXPLORER_NOTE_TITLE = "Using the explorer"
# What is true of every live explorer (attn.widgets.live): said once, under each of them.
EXPLORER_NOTE_SHARED = (
    "Every control works with the mouse and, once focused, with the arrow keys. It all runs in your "
    "browser, on this page as in JupyterLab: the picture and the numbers under it follow every move.")


def explorer_note_html(how: str = "") -> str:
    """The note shown under a live explorer, as HTML: ``how`` (what its controls do), then
    :data:`EXPLORER_NOTE_SHARED`, in a tip box (the book's theme styles ``admonition tip``; JupyterLab
    shows it as plain text). One ``<div>`` with no blank line: a single raw HTML block in Markdown.

    ``how`` is trusted HTML from the package (an explorer's ``live_usage``: ``<i>q</i>``,
    ``<i>d</i><sub>k</sub>``; no TeX, which an output's HTML does not typeset everywhere); it is not
    escaped. Raises ``TypeError`` if ``how`` is not a str.
    """
    if not isinstance(how, str):
        raise TypeError(f"explorer_note_html(): how must be a str of HTML, not {type(how).__name__}")
    paragraphs = "".join(f"<p>{text}</p>" for text in (how.strip(), EXPLORER_NOTE_SHARED) if text)
    return (f'<div class="admonition tip attn-explorer-note">'
            f'<p class="admonition-title">{EXPLORER_NOTE_TITLE}</p>{paragraphs}</div>')


def show_explorer(explorer, *, note: bool = True) -> None:
    """Show ``explorer``'s live widget (``explorer.widget()``) and, under it, the note on using it.

    The pages' one idiom for "move it yourself": ``show_explorer(live)`` as the last line of a cell.
    The note is :func:`explorer_note_html` of the explorer's ``live_usage`` (what its controls do,
    declared with the explorer); ``note=False`` shows the widget alone (for a second explorer whose
    note would follow close by). Returns ``None``, so the widget is not displayed a second time as the
    cell's value; after each move in JupyterLab ``explorer`` holds the new state (``explorer.params`` …).

    Raises ``TypeError`` if ``explorer`` has no ``widget()`` method (it is not an attn explorer).
    """
    if not callable(getattr(explorer, "widget", None)):
        raise TypeError(f"show_explorer(): explorer must be an attn explorer with a widget() method, "
                        f"not {type(explorer).__name__}")
    note_html = explorer_note_html(getattr(explorer, "live_usage", "")) if note else None
    from IPython.display import Markdown, display

    display(explorer.widget())
    if note_html is not None:
        # As Markdown (one raw HTML block), not as HTML: the book puts an HTML output in an output box
        # whose dark-mode colours are not the page's (dark text on the tip's dark background), while a
        # Markdown output joins the page's own text; JupyterLab renders both.
        display(Markdown(note_html))
