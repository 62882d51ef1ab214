"""The book's index of itself: which labelled items exist, strand by strand.

The chapter is taught in five strands (basics, concept, theory, mathematics,
practice), plus the five propositions and the apparatus. Each item is a page
anchor ``(label)=`` or a directive's ``:label:`` option in one of the Markdown
files that ``_toc.yml`` lists. This module reads those files, finds the labels,
and counts, for each strand, how many of its items are written, so that the
strands page shows counts that are computed, never typed, and links only to
labels that exist (a link to a missing label would fail the strict build).

Pure standard library; ``import attn`` does not import it.

>>> from attn import book_index
>>> labels = book_index.find_labels()                     # doctest: +SKIP
>>> book_index.progress(labels)["basics"]                 # doctest: +SKIP
Progress(name='basics', found=(...), total=11)
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Label",
    "Progress",
    "SECTIONS",
    "STRANDS",
    "Section",
    "find_labels",
    "find_root",
    "labels_in_text",
    "link",
    "links_markdown",
    "progress",
    "summary_markdown",
    "toc_files",
]


@dataclass(frozen=True)
class Section:
    """One strand (or the propositions, or the apparatus) of the chapter.

    ``expected`` lists the labels the chapter owes. A *closed* section counts
    exactly those; an *open* one (``open=True``) counts every label that starts
    with ``prefix``, because its pages choose their own label names.
    """

    name: str
    prefix: str
    total: int
    what: str
    expected: tuple[str, ...]
    open: bool = False


STRANDS: tuple[Section, ...] = (
    Section("basics", "def-", 11, "definitions of the terms", (
        "def-attention", "def-query", "def-key", "def-value", "def-similarity", "def-score",
        "def-softmax", "def-weighted-aggregation", "def-sdpa", "def-self-attention", "def-cross-attention",
    )),
    Section("concept", "concept-", 2, "the pictures to keep in mind", ("concept-weighted-average", "concept-score-matrix")),
    Section("theory", "theory-", 4, "why attention works, and where it fails", (
        "theory-no-order", "theory-temperature-limits", "theory-scaling-gradients", "theory-quadratic-cost",
    )),
    Section("mathematics", "math-", 15, "derivations, each checked by a computation", (
        "math-convexity", "math-shift-invariance", "math-logsumexp", "math-softmax-jacobian", "math-grad-query",
        "math-dot-variance", "math-grad-vs-scale", "math-permutation", "math-projection-shapes",
        "math-cross-scores", "math-flops-memory", "math-masking", "math-dot-vs-cosine",
        "math-entropy-temperature", "math-lse-gradient",
    )),
    Section("practice", "practice-", 9, "implementations, failure modes and the original papers", (
        "practice-from-scratch", "practice-multihead", "practice-break-scale", "practice-break-empty-row",
        "practice-break-float16", "practice-break-mask-polarity", "practice-break-causal-shift",
        "practice-read-papers", "practice-attention-in-a-model",
    )),  # closed: the practice pages also have page anchors (practice-build, …) that are not items
)

SECTIONS: tuple[Section, ...] = STRANDS + (
    Section("propositions", "prop-", 5, "the five claims, each proved and checked", (
        "prop-weighted-average", "prop-three-projections", "prop-scaling", "prop-self-cross", "prop-quadratic-cost",
    )),
    Section("apparatus", "apparatus-", 4, "the refreshers the chapter leans on", (
        "apparatus-inner-products", "apparatus-softmax-jacobian", "apparatus-variance", "apparatus-logsumexp",
    )),
)


@dataclass(frozen=True)
class Label:
    """A label found in a page: its name, the role that links to it, a title, and where it is."""

    name: str
    role: str  # "ref" (page/section anchors, exercises), "prf:ref" (sphinx-proof), "eq" (equations)
    title: str
    docname: str  # path from the book root, without ".md"
    line: int  # 1-based line of the anchor or of the :label: option


@dataclass(frozen=True)
class Progress:
    """How much of one section is written: the labels found (in book order) out of ``total``."""

    name: str
    found: tuple[Label, ...]
    total: int

    @property
    def count(self) -> int:
        return len(self.found)

    @property
    def fraction(self) -> str:
        return f"{self.count}/{self.total}"

    @property
    def complete(self) -> bool:
        return self.count == self.total


# ----------------------------------------------------------------------------- files


def find_root(start: str | os.PathLike | None = None) -> Path:
    """The book's root: the first folder holding ``_toc.yml``, walking up from ``start``.

    ``start`` defaults to the current directory; if no ``_toc.yml`` lies above
    it (a notebook run from a temporary folder), the checkout this package was
    installed from (``src/attn`` -> repository root) is tried.

    Raises FileNotFoundError when neither has a ``_toc.yml``.
    """
    here = Path(start if start is not None else os.getcwd()).resolve()
    candidates = [here, *here.parents]
    if start is None:
        candidates.append(Path(__file__).resolve().parents[2])
    for folder in candidates:
        if (folder / "_toc.yml").is_file():
            return folder
    raise FileNotFoundError(f"no _toc.yml found in {here} or above it, nor in the package's checkout")


_TOC_ENTRY = re.compile(r"^\s*-?\s*(?:file|root):\s*['\"]?([^'\"#\s]+)['\"]?\s*(?:#.*)?$")


def toc_files(root: str | os.PathLike | None = None) -> list[Path]:
    """The ``.md`` files that ``_toc.yml`` lists (``root:`` and every ``file:``), in book order.

    Entries whose file does not exist, or is not Markdown, are skipped; comments are ignored.
    """
    root = find_root() if root is None else Path(root)
    files: list[Path] = []
    for raw in (root / "_toc.yml").read_text(encoding="utf-8").splitlines():
        if raw.lstrip().startswith("#"):
            continue
        m = _TOC_ENTRY.match(raw)
        if not m:
            continue
        entry = m.group(1)
        path = root / entry
        if path.suffix == "":
            path = path.with_suffix(".md")
        if path.suffix == ".md" and path.is_file() and path not in files:
            files.append(path)
    return files


# ----------------------------------------------------------------------------- labels

_ANCHOR = re.compile(r"^\(([^()\s]+)\)=\s*$")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\s*(\{([^}\s]+)\})?\s*(.*)$")
_OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*)$")


def _role_for(directive: str) -> str:
    if directive.startswith("prf:"):
        return "prf:ref"
    if directive == "math":
        return "eq"
    return "ref"


def labels_in_text(text: str, docname: str = "") -> list[Label]:
    """Every ``(label)=`` anchor and directive ``:label:`` in one MyST Markdown text, in order.

    Code cells and plain code blocks are skipped (a label written inside code
    is not a label). A YAML header between ``---`` lines is skipped too.
    """
    lines = text.splitlines()
    out: list[Label] = []
    open_fences: list[str] = []  # markers of the directives still open, innermost last
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        for j in range(1, len(lines)):
            if lines[j].strip() == "---":
                i = j + 1
                break
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            marker, directive, args = fence.group(2), fence.group(4), fence.group(5).strip()
            if directive is None and not args:
                # a bare fence: it closes the innermost open directive it can close, else opens plain code
                closes = [k for k, m in enumerate(open_fences) if m[0] == marker[0] and len(marker) >= len(m)]
                if closes:
                    del open_fences[closes[-1]:]
                    i += 1
                    continue
            if directive is None or directive in ("code-cell", "code", "code-block", "raw", "eval-rst"):
                # code: skip to the closing fence (same character, at least as long, nothing after it)
                close = re.compile(rf"^\s*{re.escape(marker[0])}{{{len(marker)},}}\s*$")
                j = i + 1
                while j < len(lines) and not close.match(lines[j]):
                    j += 1
                i = j + 1
                continue
            open_fences.append(marker)
            # a directive: read its option block for :label:
            j = i + 1
            while j < len(lines) and _OPTION.match(lines[j]):
                key, value = _OPTION.match(lines[j]).groups()
                if key == "label" and value.strip():
                    out.append(Label(value.strip(), _role_for(directive), args, docname, j + 1))
                j += 1
            i = j
            continue
        anchor = _ANCHOR.match(line)
        if anchor:
            title = ""
            for nxt in lines[i + 1:]:
                if nxt.strip():
                    h = _HEADING.match(nxt)
                    title = h.group(1) if h else ""
                    break
            out.append(Label(anchor.group(1), "ref", title, docname, i + 1))
        i += 1
    return out


def find_labels(root: str | os.PathLike | None = None) -> dict[str, Label]:
    """All labels in the pages ``_toc.yml`` lists, by name, in book order.

    Raises ValueError if a label is defined twice (Sphinx would warn, and the
    strict build fail, anyway; this names both places).
    """
    root = find_root() if root is None else Path(root)
    labels: dict[str, Label] = {}
    for path in toc_files(root):
        docname = path.relative_to(root).with_suffix("").as_posix()
        for lab in labels_in_text(path.read_text(encoding="utf-8"), docname):
            if lab.name in labels:
                first = labels[lab.name]
                raise ValueError(
                    f"label {lab.name!r} is defined twice: {first.docname}.md line {first.line} "
                    f"and {lab.docname}.md line {lab.line}"
                )
            labels[lab.name] = lab
    return labels


# ----------------------------------------------------------------------------- counting and links


def progress(labels: dict[str, Label], sections: tuple[Section, ...] = SECTIONS) -> dict[str, Progress]:
    """For each section, the labels of it that exist, in book order, out of its total."""
    order = {name: k for k, name in enumerate(labels)}
    result = {}
    for sec in sections:
        names = {n for n in sec.expected if n in labels}
        if sec.open:
            names |= {n for n in labels if n.startswith(sec.prefix)}
        found = tuple(labels[n] for n in sorted(names, key=order.__getitem__))
        result[sec.name] = Progress(sec.name, found, sec.total)
    return result


def _plain(title: str) -> str:
    """A title as plain link text: MyST markup removed (link text is not parsed)."""
    title = re.sub(r"\{[^}]+\}`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", title)  # {role}`text <target>` -> text
    title = re.sub(r"[`$*_<>]", "", title)
    return re.sub(r"\s+", " ", title).strip()


def link(label: Label, text: str | None = None) -> str:
    """The MyST role that links to ``label``, with explicit link text (its title, or its name)."""
    text = _plain(text if text is not None else label.title) or label.name
    if label.role == "eq":
        return f"{{eq}}`{label.name}`"
    return f"{{{label.role}}}`{text} <{label.name}>`"


def links_markdown(found: tuple[Label, ...] | list[Label], missing: int = 0) -> str:
    """A MyST bullet list linking each label; ``missing`` adds a line saying how many are not yet written."""
    items = [f"- {link(lab)} (`{lab.name}`)" for lab in found]
    if missing:
        items.append(f"- *{missing} more not yet written*")
    return "\n".join(items) if items else "*None written yet.*"


def summary_markdown(prog: dict[str, Progress], sections: tuple[Section, ...] = SECTIONS) -> str:
    """A MyST table: one row per section with its count ``n/total`` and what it is for."""
    rows = ["| strand | written | what it is for |", "|---|---|---|"]
    for sec in sections:
        p = prog[sec.name]
        mark = "" if p.complete else " (in progress)"
        rows.append(f"| {sec.name} | {p.fraction}{mark} | {sec.what} |")
    return "\n".join(rows)
