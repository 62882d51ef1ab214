"""Sphinx extension: each exercise page offers its learner copy as a notebook (.ipynb) to download.

The download menu's ``.ipynb`` is the page as executed for the book, solutions included. A learner
needs the learner copy instead: ``exercises/learner/<page>.md`` (made by ``python -m attn.grading.learner``:
empty answer cells, no solution). It is MyST Markdown, which only a Jupyter with jupytext opens, so it is
converted to ``.ipynb`` (unexecuted, no outputs) at build time, written next to the page as
``learner/<page>.ipynb``, and offered twice: a link at the top of the page, and an entry in the theme's
download menu.
"""
from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path

LEARNER_DIR = "learner"
LINK_CLASS = "attn-learner-copy"


def learner_source(confdir: Path, pagename: str) -> Path | None:
    """exercises/learner/<stem>.md for the page exercises/<stem>, if that learner copy exists."""
    page = Path(pagename)
    if page.parent.name != "exercises":
        return None
    src = Path(confdir) / page.parent / LEARNER_DIR / (page.name + ".md")
    return src if src.is_file() else None


# IPython's %pip (into this kernel's environment), not subprocess and sys: the teachers' grader reads those as a
# way into its hand-over and would hold every submission made from a download for review.
INSTALL = """\
# Colab, or any Jupyter without this book's environment: install the attn package from the book's repository
try:
    import attn
except ImportError:
    %pip install --quiet git+{url}"""


def install_cell_source(repository: str) -> str:
    """The code of the first cell of a downloaded learner copy: installs attn only where it is missing."""
    return INSTALL.format(url=repository.rstrip("/") + ".git")


MD_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<path>(?![a-z][a-z0-9+.-]*:)[^)#\s]+)\.md(?P<anchor>#[^)\s]*)?\)")
COPY_DIR = "exercises/" + LEARNER_DIR  # where the learner copies stand in the repository


def book_page(path: str) -> str:
    """The book's page (``chapters/prop3-scaling``) a learner copy's link ``path`` (without ``.md``) names: a
    page's own (``../../chapters/prop3-scaling``), or, for another learner copy (``b01-three-tokens``), the
    exercise page it was made from (``exercises/b01-three-tokens``), which offers that copy for download."""
    page = posixpath.normpath(posixpath.join(COPY_DIR, path))
    if posixpath.dirname(page) == COPY_DIR:
        page = posixpath.join("exercises", posixpath.basename(page))
    return page


def download_links(text: str, base_url: str | None = None) -> str:
    """The Markdown links of a learner copy as they must read in its downloaded .ipynb.

    A learner copy links to the other copies next to it (``b01-three-tokens.md``) and to the book's pages
    (``../../chapters/prop3-scaling.md``), which are files of the repository. A downloaded notebook stands alone
    (in a learner's downloads, or in Colab), so no relative link reaches anything from it. With the book's
    published address ``base_url`` known (``html.baseurl`` in ``_config.yml``), each link becomes the absolute
    address of the book's page (for another copy, the exercise page that offers it; no anchor: the book's are not
    JupyterLab's); without it, the link's text stays and names the page in plain text, so that nothing in the
    notebook is a dead link (reader t5, finding 10)."""
    def swap(m):
        page = book_page(m["path"])
        if base_url:
            return f"[{m['text']}]({base_url.rstrip('/')}/{page}.html)"
        return f"{m['text']} (a page of the book, `{page}`)"
    return MD_LINK.sub(swap, text)


def write_learner_notebook(src: Path, target: Path, repository: str | None = None,
                           base_url: str | None = None) -> None:
    """The learner copy ``src`` (MyST Markdown) as a valid, unexecuted .ipynb at ``target``; with the book's
    ``repository`` URL known, a first cell installs attn from it where it is not installed (Colab). Links to
    other learner copies and to the book's pages are made absolute with the book's ``base_url``, or named in
    plain text without it (:func:`download_links`)."""
    import jupytext
    import nbformat

    nb = jupytext.read(src)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = download_links(cell.source, base_url)
    if repository:
        nb.cells.insert(0, nbformat.v4.new_code_cell(install_cell_source(repository)))
    nb.metadata.pop("jupytext", None)  # an .ipynb on its own, not paired with a text file
    nb.metadata.setdefault("kernelspec", {"display_name": "Python 3", "language": "python", "name": "python3"})
    nb.metadata.setdefault("language_info", {"name": "python"})
    nbformat.validate(nb)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)


def _offer_learner_copy(app, pagename, templatename, context, doctree):
    src = learner_source(Path(app.confdir), pagename)
    if src is None:
        return
    name = Path(pagename).name + ".ipynb"
    write_learner_notebook(src, Path(app.outdir) / Path(pagename).parent / LEARNER_DIR / name,
                           repository=getattr(app, "attn_repository", None),  # see launch_buttons.py
                           base_url=getattr(app.config, "html_baseurl", "") or None)
    url = f"{LEARNER_DIR}/{name}"
    note = (f'<p class="{LINK_CLASS}"><a class="reference download" href="{html.escape(url)}" download="{name}">'
            f'Download this exercise as a notebook ({html.escape(name)})</a>: empty answer cells and no solution, '
            "to work on in JupyterLab, Jupyter Notebook or Colab (its checks need the <code>attn</code> package "
            "installed).</p>")
    body = context.get("body", "")
    end = body.find("</h1>")
    context["body"] = body[:end + 5] + note + body[end + 5:] if end >= 0 else note + body
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].insert(0, {
                "type": "link", "url": url, "text": "learner .ipynb", "icon": "fas fa-pencil-alt",
                "tooltip": "Download the learner copy (empty answers, no solution)",
                "label": "download-learner-notebook-button",
            })


def setup(app):
    app.connect("html-page-context", _offer_learner_copy, priority=502)  # after the theme's header buttons (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
