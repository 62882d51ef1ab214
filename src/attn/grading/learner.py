"""Generate the learners' copies of the exercise pages: the same notebook without the solutions.

    python -m attn.grading.learner            # (re)write exercises/learner/*.md from exercises/*.md
    python -m attn.grading.learner --check    # exit 1 if a copy is missing or out of date

Rules, applied to each MyST notebook ``exercises/<name>.md`` (not ``index.md``):

- dropped: cells tagged ``solution`` or ``book-only``; everything from a
  ``{solution-start}`` directive to the end of its ``{solution-end}``
  directive (markdown text and code cells alike), and any ``{solution}`` block;
  the lines of the ``{exercise-start}``/``{exercise-end}`` directives and
  ``(label)=`` targets (they only mean something inside the book);
- kept, with the tags ``learner-only``, ``remove-cell`` and ``skip-execution``
  removed: cells tagged ``learner-only`` (the book hides and skips them);
- added, so that no page repeats them: a short note first, saying where the copy comes from;
  after the page's ``from attn.grading import ...`` cell, the cell that turns on
  :func:`attn.grading.record_progress`; at the end, the ``progress()`` table of the problem set;
- cross-references that only the book resolves (``{ref}`label```, ``{ref}`text <label>```,
  ``{prf:ref}`text <label>```, ``{doc}`path```) become ordinary Markdown links to the page's file, relative to the copy, which
  JupyterLab opens: another exercise links to its learner copy, a chapter to ``../../chapters/<page>.md``
  (a label inside a page adds JupyterLab's heading anchor). Other roles keep their text only.

The copies are listed nowhere in ``_toc.yml`` (the book builds only toc files).
``tests/grading/test_grading.py`` (``test_learner_copies_are_in_sync``) checks they are in sync.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

SOLUTION_START = re.compile(r"^(?P<fence>:{3,}|`{3,})\{solution-start\}")
SOLUTION_END = re.compile(r"^(?P<fence>:{3,}|`{3,})\{solution-end\}")
SOLUTION_BLOCK = re.compile(r"^(?P<fence>:{3,}|`{3,})\{solution\}")
EXERCISE_GATE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{exercise-(start|end)\}")
LABEL = re.compile(r"^\([\w\-:.]+\)=\s*$")
LEARNER_TAGS = {"learner-only", "remove-cell", "skip-execution"}
ROLE = re.compile(r"\{(?P<role>[a-z:-]+)\}`(?P<body>[^`]+)`")
HEADING = re.compile(r"^#+\s+(?P<title>.+?)\s*$")
PRF_DIRECTIVE = re.compile(r"^(?::{3,}|`{3,})\{prf:\w+\}(?P<title>.*)$")
PRF_LABEL = re.compile(r"^:label:\s*(?P<label>[\w\-:.]+)\s*$")


def labels(root: Path) -> dict[str, tuple[Path, str, bool]]:
    """``{label: (page, title of the heading it marks, whether it is the page's first heading)}`` for the book's pages.

    A ``{prf:...}`` directive's ``:label:`` counts too, with the directive's title; its link goes to its page
    (JupyterLab has no anchor for a directive), so it counts as the page's first heading."""
    found = {}
    for page in sorted(list((root / "chapters").glob("*.md")) + list((root / "exercises").glob("*.md"))):
        lines = page.read_text(encoding="utf-8").split("\n")
        first_heading = next((i for i, line in enumerate(lines) if HEADING.match(line)), None)
        for i, line in enumerate(lines):
            d = PRF_DIRECTIVE.match(line.strip())
            if d:
                for k in range(i + 1, min(i + 4, len(lines))):
                    if m := PRF_LABEL.match(lines[k].strip()):
                        found[m["label"]] = (page, d["title"].strip() or m["label"], True)
                        break
                continue
            m = LABEL.match(line.strip())
            if not m:
                continue
            j = next((k for k in range(i + 1, min(i + 4, len(lines))) if HEADING.match(lines[k])), None)
            title = HEADING.match(lines[j])["title"] if j is not None else page.stem
            found[line.strip()[1:-2]] = (page, title, j == first_heading)
    return found


def _link_target(page: Path, root: Path) -> str:
    """The file a learner copy (in exercises/learner/) should link to for ``page``."""
    if page.parent == root / "exercises" and page.name != "index.md":
        return page.name  # the learner's own copy of that exercise, next to this one
    return os.path.relpath(page, root / "exercises" / "learner").replace(os.sep, "/")


def _plain_title(title: str) -> str:
    return re.sub(r"[*_`$]", "", title)


def links(text: str, known: dict, root: Path) -> str:
    """Replace the book-only cross-reference roles in ``text`` by Markdown links that work in JupyterLab."""
    def swap(m):
        role, body = m["role"], m["body"]
        explicit = re.match(r"^(?P<text>.*?)\s*<(?P<target>[^>]+)>$", body, re.S)
        shown, target = (explicit["text"], explicit["target"]) if explicit else (None, body)
        if role in ("ref", "prf:ref") and target in known:
            page, title, top = known[target]
            href = _link_target(page, root)
            if not top:
                href += "#" + _plain_title(title).replace(" ", "-")
            return f"[{shown or _plain_title(title)}]({href})"
        if role == "doc":
            page = (root / target.lstrip("/")).with_suffix(".md")
            if page.exists():
                return f"[{shown or page.stem}]({_link_target(page, root)})"
        if role.startswith("glue"):
            return glued_for_learner(body)
        return shown or body  # a role JupyterLab cannot follow: keep its text
    return ROLE.sub(swap, text)


# The glued numbers an exercise statement may show: a learner copy is not executed by the book, so the
# copy computes them itself, the same way the page's glue cell does (from the item's own definition).
CASE_COUNT = re.compile(r"n_cases_(?P<item>[A-Z]\d+)_(?P<part>\w+)")
TOLERANCE = re.compile(r"tol_(?P<item>[A-Z]\d+)_(?P<part>\w+)_(?P<kind>rtol|atol)")
DATUM = re.compile(r"data_(?P<item>[A-Z]\d+)_(?P<key>\w+)")
CONSTANT = re.compile(r"const_(?P<name>E\d\d_[A-Z0-9_]+)")


def statement_value(name: str):
    """The value a page glues under ``name`` in an exercise statement, computed from the item's definition.

    - ``n_cases_<item>_<part>``: how many test cases a function part is run on;
    - ``tol_<item>_<part>_rtol`` / ``_atol``: a part's declared tolerance;
    - ``data_<item>_<key>``: one given number of an item's data (a scalar);
    - ``const_<E..._NAME>``: a constant of :mod:`attn.grading.exercises` (e.g. ``E08_WTOL``).

    Raises ``ValueError`` for any other name.
    """
    from . import get_item  # the package registers every item

    if m := CASE_COUNT.fullmatch(name):
        return len(get_item(m["item"]).cases(m["part"]))
    if m := TOLERANCE.fullmatch(name):
        value = getattr(get_item(m["item"]).part(m["part"]), m["kind"])
        if value is None:
            raise ValueError(f"{{glue}}`{name}`: part {m['part']!r} of {m['item']} declares no {m['kind']}")
        return float(value)
    if m := DATUM.fullmatch(name):
        return float(getattr(get_item(m["item"]).context(), m["key"]))
    if m := CONSTANT.fullmatch(name):
        from . import exercises

        return getattr(exercises, m["name"])
    raise ValueError(f"learner copy: {{glue}}`{name}` is computed by the book only; an exercise statement "
                     "may glue n_cases_<item>_<part>, tol_<item>_<part>_rtol|atol, data_<item>_<key> or "
                     "const_<E.._NAME> (or move the number into the solution)")


def glued_for_learner(body: str) -> str:
    """The text of ``{glue:text}`name``` or ``{glue:text}`name:format``` in a learner copy: the value of
    :func:`statement_value`, formatted as the role asks (raises ``ValueError`` for a name it does not know)."""
    name, _, spec = body.partition(":")
    value = statement_value(name)
    return format(value, spec) if spec else str(value)


# The learner's scaffolding, added to every copy (the book's pages do not carry it): progress is
# recorded from the first cell on, and the copy ends with the table of the whole problem set.
RECORD_CELL = ("from attn.grading import progress, record_progress\n\n"
               "record_progress()  # your checks are saved next to this notebook; progress() shows the table")
PROGRESS_TEXT = "When you are done, `progress()` shows every item of the problem set: not tried, not yet, or correct."
PROGRESS_CELL = "progress()"


def _with_progress(cells: list, page: Path) -> list:
    """``cells`` with :data:`RECORD_CELL` after the page's ``from attn.grading import ...`` cell and the
    progress table at the end. Raises ``ValueError`` if the page never imports from ``attn.grading``."""
    from nbformat.v4 import new_code_cell, new_markdown_cell

    first = next((i for i, c in enumerate(cells)
                  if c.cell_type == "code" and re.search(r"^from attn\.grading import ", c.source, re.M)), None)
    if first is None:
        raise ValueError(f"{page}: no code cell imports from attn.grading, so the copy has nowhere to start "
                         "recording progress")
    return (cells[:first + 1] + [new_code_cell(RECORD_CELL)] + cells[first + 1:]
            + [new_markdown_cell(PROGRESS_TEXT), new_code_cell(PROGRESS_CELL)])


def _note(source: str) -> str:
    return (
        f"*Your own copy of this problem, without the worked solution (generated from `{source}`). "
        "Replace each `...` with your answer, run the cell, then run the `check` cell below it. "
        "`hint(...)` gives one hint at a time; `progress()` shows how far you have come.*"
    )


class _Stripper:
    """Walks the cells in order, remembering whether it is inside a solution block."""

    def __init__(self):
        self.in_solution = False
        self.closing: str | None = None  # the fence that closes the directive being skipped

    def markdown(self, text: str) -> str:
        out = []
        lines = iter(text.split("\n"))
        for line in lines:
            s = line.strip()
            if self.closing is not None:  # inside a directive's header/body that we skip
                if s == self.closing:
                    self.closing = None
                continue
            if self.in_solution:
                m = SOLUTION_END.match(s)
                if m:
                    self.in_solution = False
                    self.closing = m["fence"]
                continue
            m = SOLUTION_START.match(s)
            if m:
                self.in_solution = True
                continue
            m = SOLUTION_BLOCK.match(s) or EXERCISE_GATE.match(s)
            if m:
                self.closing = m["fence"]
                continue
            if LABEL.match(s):
                continue
            out.append(line)
        return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def render(page: Path, root: Path) -> str:
    """The learner copy of ``page`` as MyST Markdown text."""
    import jupytext
    from nbformat.v4 import new_markdown_cell

    nb = jupytext.read(page)
    known = labels(root)
    strip = _Stripper()
    cells = []
    for cell in nb.cells:
        tags = list(cell.get("metadata", {}).get("tags", []))
        if cell.cell_type == "markdown":
            text = strip.markdown(cell.source)
            if text and not ({"solution", "book-only"} & set(tags)):
                cell.source = links(text, known, root)
                cells.append(cell)
            continue
        if strip.in_solution or strip.closing is not None or {"solution", "book-only"} & set(tags):
            continue
        if "learner-only" in tags:
            kept = [t for t in tags if t not in LEARNER_TAGS]
            if kept:
                cell.metadata["tags"] = kept
            else:
                cell.metadata.pop("tags", None)
        cells.append(cell)
    if strip.in_solution:
        raise ValueError(f"{page}: a {{solution-start}} block is never closed by {{solution-end}}")
    rel = page.relative_to(root).as_posix()
    nb.cells = [new_markdown_cell(_note(rel))] + _with_progress(cells, page)
    for c in nb.cells:
        c.pop("id", None)
    text = jupytext.writes(nb, fmt="md:myst")
    return re.sub(r"\n +jupytext_version: [^\n]*", "", text, count=1)  # stable across jupytext versions


def pages(root: Path) -> list[Path]:
    folder = root / "exercises"
    return sorted(
        p for p in folder.glob("*.md")
        if p.name != "index.md" and p.read_text(encoding="utf-8").startswith("---\njupytext:")
    )


def copy_path(page: Path, root: Path) -> Path:
    return root / "exercises" / "learner" / page.name


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="the book's root folder (default: the current folder)")
    ap.add_argument("--check", action="store_true", help="only report copies that are missing or out of date")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    stale = []
    for page in pages(root):
        dest = copy_path(page, root)
        text = render(page, root)
        if dest.exists() and dest.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(dest.relative_to(root).as_posix())
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
            print(f"wrote {dest.relative_to(root)}")
    if stale:
        print("out of date (run python -m attn.grading.learner): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
