"""The book's index of itself: which labelled items exist, strand by strand.

The chapter is taught in five strands (basics, concept, theory, mathematics,
practice), plus the five propositions and the apparatus. Each item is a page
anchor ``(label)=`` or a directive's ``:label:`` option in one of the Markdown
files that ``_toc.yml`` lists. This module reads those files, finds the labels,
and counts, for each strand, how many of its items are written, so that the
strands page shows counts that are computed, never typed, and links only to
labels that exist (a link to a missing label would fail the strict build).

Reads with the parsers Jupyter Book installs (``sphinx_external_toc`` for ``_toc.yml``, MyST's
markdown-it for the pages); ``import attn`` does not import it.

>>> from attn import book_index
>>> labels = book_index.find_labels()                     # doctest: +SKIP
>>> book_index.written(labels)["basics"]                  # doctest: +SKIP
Written(name='basics', found=(...), total=11)
"""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Label",
    "SECTIONS",
    "STRANDS",
    "Section",
    "find_labels",
    "find_root",
    "labels_in_text",
    "link",
    "links_markdown",
    "pages_by_section",
    "pages_markdown",
    "summary_markdown",
    "toc_files",
    "written",
    "Written",
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
    Section("theory", "theory-", 4, "what attention can and cannot see, and what it costs", (
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
class Written:
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


def toc_files(root: str | os.PathLike | None = None) -> list[Path]:
    """The ``.md`` files that ``_toc.yml`` lists (the root and every file entry), in book order.

    ``_toc.yml`` is read by ``sphinx_external_toc``, the parser Jupyter Book itself uses, and walked
    depth first (a page, then the pages under it). Entries whose file does not exist, or is not Markdown,
    are skipped.
    """
    from sphinx_external_toc.parsing import parse_toc_yaml

    root = find_root() if root is None else Path(root)
    site = parse_toc_yaml(root / "_toc.yml")
    files: list[Path] = []

    def visit(docname: str) -> None:
        path = root / docname
        path = path if path.suffix == ".md" else path.with_suffix(".md")
        if path.is_file() and path not in files:
            files.append(path)
        doc = site[docname] if docname in site else None
        for tree in doc.subtrees if doc else ():
            for item in tree.items:
                if isinstance(item, str):  # a file entry (globs and URLs are not strings)
                    visit(str(item))

    visit(site.root.docname)
    return files


# ----------------------------------------------------------------------------- labels

_CODE_DIRECTIVES = ("code-cell", "code", "code-block", "raw", "eval-rst", "math")  # bodies are not Markdown
_OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*)$")


@functools.lru_cache(maxsize=1)
def _parser():
    """MyST's own Markdown parser (markdown-it with the MyST plugins), with the book's extensions."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions={"amsmath", "colon_fence", "deflist", "dollarmath", "substitution"})
    return create_md_parser(config, RendererHTML)


def _role_for(directive: str) -> str:
    if directive.startswith("prf:"):
        return "prf:ref"
    if directive == "math":
        return "eq"
    return "ref"


def _options(body: str) -> tuple[dict[str, str], int, int]:
    """A directive's options (``:key: value`` lines, or a ``---`` YAML block), how many lines they take,
    and the line of the ``label`` option within ``body`` (0-based; 0 when there is none)."""
    lines = body.splitlines()
    if lines and lines[0].strip() == "---":
        import yaml

        for j in range(1, len(lines)):
            if lines[j].strip() == "---":
                opts = yaml.safe_load("\n".join(lines[1:j])) or {}
                opts = {str(k): str(v) for k, v in opts.items()} if isinstance(opts, dict) else {}
                at = next((i for i in range(1, j) if lines[i].lstrip().startswith("label:")), 0)
                return opts, j + 1, at
        return {}, 0, 0
    opts, n, at = {}, 0, 0
    while n < len(lines) and (m := _OPTION.match(lines[n])):
        opts[m.group(1)] = m.group(2).strip()
        at = n if m.group(1) == "label" else at
        n += 1
    return opts, n, at


def labels_in_text(text: str, docname: str = "", _offset: int = 0) -> list[Label]:
    """Every ``(label)=`` anchor and directive ``:label:`` in one MyST Markdown text, in order.

    The text is parsed by MyST's own parser (``myst_parser``'s markdown-it), so code cells, code blocks
    and the YAML header are what MyST says they are: a label written inside code is not a label. The
    body of a directive is parsed in turn (directives nest).
    """
    out: list[Label] = []
    tokens = _parser().parse(text)
    for k, tok in enumerate(tokens):
        if tok.type == "myst_target":
            nxt = tokens[k + 1] if k + 1 < len(tokens) else None
            title = tokens[k + 2].content if nxt is not None and nxt.type == "heading_open" else ""
            out.append(Label(tok.content, "ref", title, docname, _offset + tok.map[0] + 1))
        elif tok.type in ("fence", "colon_fence") and tok.info.startswith("{"):
            directive, _, args = tok.info[1:].partition("}")
            opts, n, at = _options(tok.content)
            if opts.get("label"):  # the fence's first line is tok.map[0]; its body starts on the next
                out.append(Label(opts["label"], _role_for(directive), args.strip(), docname, _offset + tok.map[0] + 2 + at))
            if directive not in _CODE_DIRECTIVES:
                body = "\n".join(tok.content.splitlines()[n:])
                out.extend(labels_in_text(body, docname, _offset + tok.map[0] + 1 + n))
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


def written(labels: dict[str, Label], sections: tuple[Section, ...] = SECTIONS) -> dict[str, Written]:
    """For each section, the labels of it that exist, in book order, out of its total."""
    order = {name: k for k, name in enumerate(labels)}
    result = {}
    for sec in sections:
        names = {n for n in sec.expected if n in labels}
        if sec.open:
            names |= {n for n in labels if n.startswith(sec.prefix)}
        found = tuple(labels[n] for n in sorted(names, key=order.__getitem__))
        result[sec.name] = Written(sec.name, found, sec.total)
    return result


def _plain(title: str) -> str:
    """A title as plain link text (link text is not parsed): MyST's inline tokens, markup dropped,
    ``{role}`text <target>``` read as its text."""
    parts = []
    for tok in _parser().parseInline(title)[0].children or ():
        if tok.type in ("text", "code_inline", "math_inline"):
            parts.append(tok.content)
        elif tok.type == "myst_role":
            parts.append(re.sub(r"\s*<[^>]*>$", "", tok.content))
        elif tok.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return re.sub(r"[`$*_<>]", "", re.sub(r"\s+", " ", "".join(parts))).strip()


def link(label: Label, text: str | None = None) -> str:
    """The MyST role that links to ``label``, with explicit link text (its title, or its name)."""
    text = _plain(text if text is not None else label.title) or label.name
    if label.role == "eq":
        return f"{{eq}}`{label.name}`"
    return f"{{{label.role}}}`{text} <{label.name}>`"


def _bullet(label: Label) -> str:
    """One bullet linking ``label`` by its title. A section title with math becomes a Markdown link
    ``[title](#name)``, whose text MyST parses (so ``$1/\\sqrt{d_k}$`` is typeset); a role's link text would
    be shown literally."""
    if "$" in label.title and label.role == "ref":
        return f"- [{label.title}](#{label.name})"
    return f"- {link(label)}"


def links_markdown(found: tuple[Label, ...] | list[Label], missing: int = 0) -> str:
    """A MyST bullet list linking each label by its title (a reader never sees the label's name);
    ``missing`` adds a line saying how many are not yet written."""
    items = [_bullet(lab) for lab in found]
    if missing:
        items.append(f"- *{missing} more not yet written*")
    return "\n".join(items) if items else "*None written yet.*"


def pages_by_section(labels: dict[str, Label], sections: tuple[Section, ...] = SECTIONS) -> dict[str, dict[str, int]]:
    """For each page that holds items of the sections, in book order: how many items of each section it holds.

    ``{"chapters/basics": {"basics": 11}, "chapters/prop1-weighted-average": {"concept": 1, "propositions": 1}, …}``:
    pages by docname, each page's sections in the order of ``sections``. Pages that hold no item are left out.
    """
    book_order: dict[str, int] = {}
    for lab in labels.values():
        book_order.setdefault(lab.docname, len(book_order))
    prog = written(labels, sections)
    pages: dict[str, dict[str, int]] = {}
    for sec in sections:
        for lab in prog[sec.name].found:
            counts = pages.setdefault(lab.docname, {})
            counts[sec.name] = counts.get(sec.name, 0) + 1
    return {doc: pages[doc] for doc in sorted(pages, key=book_order.__getitem__)}


def pages_markdown(labels: dict[str, Label], sections: tuple[Section, ...] = SECTIONS) -> str:
    """A MyST table: one row per page that holds items (linked with ``{doc}``, so it reads as the page's title),
    and the sections its items belong to, with how many of each: ``basics (11)``."""
    rows = ["| page | its items serve |", "|---|---|"]
    for doc, counts in pages_by_section(labels, sections).items():
        serves = ", ".join(f"{name} ({n})" for name, n in counts.items())
        rows.append(f"| {{doc}}`/{doc}` | {serves} |")
    return "\n".join(rows)


def summary_markdown(prog: dict[str, Written], sections: tuple[Section, ...] = SECTIONS) -> str:
    """A MyST table: one row per section with its count ``n/total`` and what it is for."""
    rows = ["| strand | written | what it is for |", "|---|---|---|"]
    for sec in sections:
        p = prog[sec.name]
        mark = "" if p.complete else " (in progress)"
        rows.append(f"| {sec.name} | {p.fraction}{mark} | {sec.what} |")
    return "\n".join(rows)
