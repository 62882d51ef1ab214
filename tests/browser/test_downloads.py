"""Each exercise page offers its learner copy (empty answer cells, no solution) as an .ipynb to download:
the link is on the page and in the download menu, the file comes from the built book's own server, opens
with nbformat and runs top to bottom in a fresh kernel without an error (what a learner does first)."""
from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from book import ROOT
from browsing import toc_pages

EXERCISE_PAGES = [p for p in toc_pages()
                  if p.startswith("exercises/") and (ROOT / "exercises" / "learner" / Path(p).with_suffix(".md").name).is_file()]
LINK = re.compile(r'<p class="attn-learner-copy"><a [^>]*href="([^"]+)"')


def test_every_exercise_has_a_learner_copy():
    assert len(EXERCISE_PAGES) >= 15, EXERCISE_PAGES
    assert "exercises/index.html" not in EXERCISE_PAGES


@pytest.mark.parametrize("name", EXERCISE_PAGES)
def test_learner_copy_downloads_opens_and_runs(book_html, server, name, tmp_path):
    text = (book_html / name).read_text(encoding="utf-8")
    links = LINK.findall(text)
    assert len(links) == 1, f"{name}: expected one learner-copy link at the top of the page, found {links}"
    menu = re.findall(r'<a href="([^"]+)"[^>]*\s+class="[^"]*btn-download-learner-notebook-button', text)
    assert menu == links, f"{name}: the download menu offers {menu}, not the learner copy {links}"
    assert links[0].endswith(".ipynb")
    url = server + str(Path(name).parent / links[0])
    with urllib.request.urlopen(url, timeout=30) as response:
        raw = response.read().decode("utf-8")
    nb = nbformat.reads(raw, as_version=4)
    nbformat.validate(nb)
    sources = "\n".join(c.source for c in nb.cells)
    assert "solution-start" not in sources and "{solution" not in sources, f"{name}: the learner copy holds a solution"
    code = [c for c in nb.cells if c.cell_type == "code"]
    # an empty answer: `name = ...`, or a function whose body is `...` (exercises that ask for code)
    assert any(re.search(r"^\w+ = \.\.\.|^\s+\.\.\.", c.source, re.M) for c in code), f"{name}: no empty answer cell"
    assert all(not c.get("outputs") for c in code), f"{name}: a learner copy ships with outputs"
    # run it as a learner would, in a folder of its own (record_progress() writes a progress file there)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{name}: the learner copy raised: {[e.get('ename') + ': ' + e.get('evalue', '') for e in errors]}"
    shown = "\n".join(str(o.get("data", {}).get("text/html", "")) + str(o.get("data", {}).get("text/plain", ""))
                      for c in code for o in c.get("outputs", []))
    assert "attn-feedback" in shown or "Not tried" in shown or "not tried" in shown, (
        f"{name}: the check cells showed no feedback on the empty answers")
