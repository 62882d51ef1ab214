"""What ``check`` and ``hint`` return: small objects that read well as text and as HTML.

Nothing here uses a custom MIME type (the strict book build refuses them):
a notebook shows ``_repr_html_``, a terminal shows ``__str__``.
"""
from __future__ import annotations

import html
import re

CORRECT = "correct"
NOT_YET = "not yet"
NOT_TRIED = "not tried"
STATUSES = (NOT_TRIED, NOT_YET, CORRECT)

_ICON = {CORRECT: "✓", NOT_YET: "✗", NOT_TRIED: "…"}
# Each box's left border: the colour for a light page, which JupyterLab and Colab use as written; the book's
# dark mode swaps it through the CSS variable named here (_ext/offline_book_static/attn-palette.css), and
# paints the box's panel as the page (the theme otherwise puts every HTML output on a light panel).
_COLOUR = {CORRECT: "#1a7f37", NOT_YET: "#b35900", NOT_TRIED: "#57606a"}
_VARIABLE = {CORRECT: "--attn-verdict-correct", NOT_YET: "--attn-verdict-not-yet",
             NOT_TRIED: "--attn-verdict-not-tried"}
NOTE_COLOUR, NOTE_VARIABLE = "#0969da", "--attn-verdict-note"
_LABEL = {CORRECT: "Correct", NOT_YET: "Not yet", NOT_TRIED: "Not tried yet"}


def _html(text: str) -> str:
    """Escape ``text`` for HTML, showing `code spans` as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _box(colour: str, variable: str, inner: str) -> str:
    return (
        f'<div class="attn-feedback" style="border-left:4px solid var({variable}, {colour});'
        f'padding:0.3em 0.8em;margin:0.3em 0">{inner}</div>'
    )


class Feedback:
    """The verdict on one part of one item.

    Attributes: ``item`` ("B01"), ``part`` ("scores"), ``status`` (one of
    ``"correct"``, ``"not yet"``, ``"not tried"``), ``message`` (one or two
    kind, specific sentences; never the expected answer), ``mistake`` (the
    key of the recognised wrong answer, or a generic key such as
    ``"shape"``, ``"nan"``, ``"type"``; ``None`` when correct or not tried).
    ``bool(feedback)`` is True only when the answer is correct.
    """

    __slots__ = ("item", "part", "status", "message", "mistake")

    def __init__(self, item: str, part: str, status: str, message: str, mistake: str | None = None):
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}; got {status!r}")
        self.item, self.part, self.status, self.message, self.mistake = item, part, status, message, mistake

    @property
    def correct(self) -> bool:
        return self.status == CORRECT

    def __bool__(self) -> bool:
        return self.correct

    def _head(self) -> str:
        return f"{self.item} {self.part}" if self.part else self.item

    def __str__(self) -> str:
        return f"{_ICON[self.status]} {self._head()}: {_LABEL[self.status]}. {self.message}".rstrip()

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return _box(
            _COLOUR[self.status], _VARIABLE[self.status],
            f"<strong>{_ICON[self.status]} {html.escape(self._head())}: {_LABEL[self.status]}.</strong> "
            f"{_html(self.message)}",
        )


class Report:
    """Several :class:`Feedback` at once (``check`` given more than one part). Iterable; truthy when all correct."""

    def __init__(self, feedbacks):
        self.feedbacks = list(feedbacks)

    def __iter__(self):
        return iter(self.feedbacks)

    def __len__(self) -> int:
        return len(self.feedbacks)

    def __getitem__(self, part: str) -> Feedback:
        for f in self.feedbacks:
            if f.part == part:
                return f
        raise KeyError(part)

    def __bool__(self) -> bool:
        return all(self.feedbacks)

    def __str__(self) -> str:
        return "\n".join(str(f) for f in self.feedbacks)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return "".join(f._repr_html_() for f in self.feedbacks)


class Note:
    """A hint, or any short message to the learner (``title``: ``text``). Always falsy: a note is never a
    correct verdict, so ``if check(...):`` is False for a misuse or the checker's own problem."""

    def __init__(self, title: str, text: str):
        self.title, self.text = title, text

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"{self.title}: {self.text}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return _box(NOTE_COLOUR, NOTE_VARIABLE, f"<strong>{html.escape(self.title)}:</strong> {_html(self.text)}")


class Table:
    """A small table (header row + rows of strings) for ``progress()`` and variants."""

    def __init__(self, title: str, header, rows, footer: str = ""):
        self.title, self.header, self.rows, self.footer = title, list(header), [list(r) for r in rows], footer

    def __str__(self) -> str:
        cols = [self.header] + self.rows
        widths = [max(len(str(r[i])) for r in cols) for i in range(len(self.header))]
        line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
        out = [self.title, line(self.header), line(["-" * w for w in widths])] + [line(r) for r in self.rows]
        if self.footer:
            out.append(self.footer)
        return "\n".join(out)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        th = "".join(f"<th style='text-align:left;padding:0 0.6em'>{html.escape(str(h))}</th>" for h in self.header)
        trs = "".join(
            "<tr>" + "".join(f"<td style='padding:0 0.6em'>{html.escape(str(c))}</td>" for c in r) + "</tr>"
            for r in self.rows
        )
        foot = f"<p>{html.escape(self.footer)}</p>" if self.footer else ""
        return (
            f"<div class='attn-table'><p><strong>{html.escape(self.title)}</strong></p>"
            f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>{foot}</div>"
        )
