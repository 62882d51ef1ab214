"""The book's own Sphinx extensions (_ext/), each on a tiny book or a copy, not on the whole book:
the execution cache keyed on the package's source, the launch buttons' repository, the offline assets of
a checkout where bin/setup has not run, and the learner copies offered for download."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jupytext
import nbformat
import pytest

from book import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
import execution_cache  # noqa: E402
import launch_buttons  # noqa: E402
import learner_downloads  # noqa: E402
import offline_book  # noqa: E402

PYTHON = sys.executable


# -- the execution cache ------------------------------------------------------------------------
def test_source_hash_follows_every_file_and_its_name(tmp_path):
    (tmp_path / "src" / "attn" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "attn" / "a.py").write_text("x = 1\n")
    (tmp_path / "src" / "attn" / "sub" / "b.py").write_text("y = 2\n")
    first = execution_cache.source_hash(tmp_path)
    assert first == execution_cache.source_hash(tmp_path), "the same files must give the same key"
    (tmp_path / "src" / "attn" / "sub" / "b.py").write_text("y = 3\n")
    edited = execution_cache.source_hash(tmp_path)
    assert edited != first
    (tmp_path / "src" / "attn" / "sub" / "b.py").rename(tmp_path / "src" / "attn" / "sub" / "c.py")
    assert execution_cache.source_hash(tmp_path) != edited, "a renamed module must change the key"
    (tmp_path / "src" / "attn" / "__pycache__").mkdir()
    (tmp_path / "src" / "attn" / "__pycache__" / "a.cpython-311.py").write_text("junk")
    renamed = execution_cache.source_hash(tmp_path)
    (tmp_path / "src" / "attn" / "__pycache__" / "a.cpython-311.py").write_text("other junk")
    assert execution_cache.source_hash(tmp_path) == renamed, "__pycache__ is not source"


def test_the_real_package_is_part_of_the_key():
    patterns = execution_cache.DEPENDS
    files = [p for pat in patterns for p in ROOT.glob(pat)]
    assert ROOT / "src" / "attn" / "attention.py" in files
    assert ROOT / "benchmarks" / "results" / "latest.json" in files  # Prop 5's page reads it


def test_cache_is_emptied_only_when_the_key_changes(tmp_path):
    cache = tmp_path / ".jupyter_cache"
    assert not execution_cache.invalidate_if_changed(cache, "k1")  # nothing to empty yet
    (cache / "executed").mkdir()
    assert not execution_cache.invalidate_if_changed(cache, "k1")
    assert (cache / "executed").exists(), "same key: the cache is kept"
    assert execution_cache.invalidate_if_changed(cache, "k2")
    assert not (cache / "executed").exists(), "new key: the cache is emptied"
    assert (cache / execution_cache.STAMP).read_text().strip() == "k2"


def test_the_cache_database_is_made_before_the_parallel_readers_start(tmp_path):
    """Parallel readers that each created the database raced: "table settings already exists"."""
    import sqlite3
    from concurrent.futures import ProcessPoolExecutor

    cache = tmp_path / ".jupyter_cache"
    execution_cache.invalidate_if_changed(cache, "k1")
    db = execution_cache.create_database(cache)
    tables = {r[0] for r in sqlite3.connect(db).execute("select name from sqlite_master where type='table'")}
    assert {"settings", "nbcache", "nbproject"} <= tables
    with ProcessPoolExecutor(4) as pool:  # what each reader does next: open the cache that now exists
        assert list(pool.map(execution_cache.create_database, [cache] * 8)) == [db] * 8
    assert execution_cache.create_database(cache) == db  # a second call is harmless


TINY_CONF = """
import sys
sys.path.insert(0, {ext!r})
extensions = ["myst_nb", "execution_cache"]
nb_execution_mode = "cache"
attn_execution_depends = ["pkg/*.py"]
exclude_patterns = ["_build", "pkg"]
"""
TINY_CODE = """import sys
sys.path.insert(0, "pkg")
import value
print("value is", value.VALUE)"""
TINY_PAGE = jupytext.writes(  # a one-page MyST notebook; jupytext writes its header
    nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Tiny"), nbformat.v4.new_code_cell(TINY_CODE)],
                             metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}),
    fmt="md:myst")


def _build_tiny(src: Path) -> tuple[str, str]:
    done = subprocess.run([PYTHON, "-m", "sphinx", "-b", "html", "-q", "-d", str(src / "_build" / ".doctrees"),
                           str(src), str(src / "_build" / "html")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    page = (src / "_build" / "html" / "index.html").read_text(encoding="utf-8")
    return page, done.stdout + done.stderr


def test_a_rebuild_reexecutes_after_a_package_edit_and_not_otherwise(tmp_path):
    """A copy of the mechanism on a one-page book whose page prints a value from a module (what every
    page does with attn): edit the module, and the rebuilt page shows the new value."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "value.py").write_text("VALUE = 1\n")
    (tmp_path / "conf.py").write_text(TINY_CONF.format(ext=str(ROOT / "_ext")))
    (tmp_path / "index.md").write_text(TINY_PAGE)
    cache = tmp_path / "_build" / ".jupyter_cache"

    page, _ = _build_tiny(tmp_path)
    assert "value is 1" in page
    executed = (cache / execution_cache.STAMP).stat().st_mtime_ns
    html_mtime = (tmp_path / "_build" / "html" / "index.html").stat().st_mtime_ns

    page, _ = _build_tiny(tmp_path)  # nothing changed: the page is neither re-read nor executed
    assert "value is 1" in page
    assert (tmp_path / "_build" / "html" / "index.html").stat().st_mtime_ns == html_mtime, "an unchanged book was rewritten"
    assert (cache / execution_cache.STAMP).stat().st_mtime_ns == executed, "an unchanged book emptied its cache"

    (tmp_path / "pkg" / "value.py").write_text("VALUE = 2\n")
    page, _ = _build_tiny(tmp_path)
    assert "value is 2" in page, "after an edit to the package the page still shows the cached output"
    assert "value is 1" not in page


def test_the_book_caches_execution():
    text = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert "execute_notebooks: cache" in text
    assert "execution_cache: _ext" in text
    assert "--clean" in (ROOT / "tests" / "book.py").read_text(encoding="utf-8"), "the tests (CI) must build from clean"


# -- launch buttons -----------------------------------------------------------------------------
@pytest.mark.parametrize("remote, url", [
    ("https://github.com/owner/repo.git", "https://github.com/owner/repo"),
    ("https://github.com/owner/repo", "https://github.com/owner/repo"),
    ("git@github.com:owner/repo.git", "https://github.com/owner/repo"),
    ("ssh://git@gitlab.com/owner/repo.git", "https://gitlab.com/owner/repo"),
    ("https://token@github.com/owner/repo.git", "https://github.com/owner/repo"),
    ("/work/main", None),
    ("https://example.org/owner/repo.git", None),
    ("", None),
])
def test_web_url_of_a_remote(remote, url):
    assert launch_buttons.web_url(remote) == url


def _git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def test_repository_from_setting_then_remote_then_none(tmp_path):
    assert launch_buttons.repository(tmp_path, "https://github.com/a/b/", "main") == ("https://github.com/a/b", "main")
    assert launch_buttons.repository(tmp_path, "", "main") == (None, "main")  # not a git checkout
    _git(tmp_path, "init", "-q")
    assert launch_buttons.repository(tmp_path, "", "main") == (None, "main")  # no remote
    _git(tmp_path, "remote", "add", "origin", "git@github.com:someone/attn.git")
    assert launch_buttons.repository(tmp_path, "", "main") == ("https://github.com/someone/attn", "main")
    assert launch_buttons.repository(tmp_path, "https://github.com/x/y", "dev") == ("https://github.com/x/y", "dev")


def test_no_placeholder_repository_in_the_config():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    assert url == "" or launch_buttons.web_url(url), f"repository.url {url!r}: empty (use the git remote) or a real repository"
    assert "attn-book/attn" not in url


def _tiny_theme_book(src: Path) -> str:
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "_ext")!r})
        extensions = ["myst_nb", "launch_buttons"]
        html_theme = "sphinx_book_theme"
        html_theme_options = {{"repository_url": "", "repository_branch": "main", "path_to_docs": "",
                               "launch_buttons": {{"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"}}}}
        nb_execution_mode = "off"
        exclude_patterns = ["_build"]
        """))
    (src / "index.md").write_text(TINY_PAGE)
    done = subprocess.run([PYTHON, "-m", "sphinx", "-b", "html", "-q", "-W", str(src), str(src / "_build" / "html")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return (src / "_build" / "html" / "index.html").read_text(encoding="utf-8")


def test_launch_buttons_hidden_without_a_repository_and_shown_with_one(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    page = _tiny_theme_book(plain)
    assert "mybinder.org" not in page, "a launch button without a repository"
    assert "_sources/index.ipynb" in page, "the download menu must still offer the executed notebook"
    assert (plain / "_build" / "html" / "_sources" / "index.ipynb").is_file()

    cloned = tmp_path / "cloned"
    cloned.mkdir()
    _git(cloned, "init", "-q")
    _git(cloned, "remote", "add", "origin", "https://github.com/someone/attn.git")
    page = _tiny_theme_book(cloned)
    assert "https://mybinder.org/v2/gh/someone/attn/main?urlpath=lab/tree/index.md" in page


# -- a checkout where bin/setup has not run ----------------------------------------------------
def test_missing_assets_are_copied_from_node_modules(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "offline-assets").write_text((ROOT / "bin" / "offline-assets").read_text())
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    assert offline_book.ensure_offline_assets(str(tmp_path), npm=["false"]) is True
    assert (tmp_path / offline_book.ASSET).is_file()
    assert offline_book.ensure_offline_assets(str(tmp_path), npm=["false"]) is False  # already there


def test_missing_assets_without_npm_stop_the_build_naming_bin_setup(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "offline-assets").write_text((ROOT / "bin" / "offline-assets").read_text())
    (tmp_path / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "_ext")!r})
        import offline_book
        offline_book.NPM = ["false"]
        extensions = ["offline_book"]
        html_extra_path = [".offline"]
        """))
    (tmp_path / "index.rst").write_text("Tiny\n====\n")
    done = subprocess.run([PYTHON, "-m", "sphinx", "-b", "html", "-W", str(tmp_path), str(tmp_path / "_build")],
                          capture_output=True, text=True)
    log = done.stdout + done.stderr
    assert done.returncode != 0
    assert "bin/setup" in log, log[-2000:]
    assert "html_extra_path entry" not in log, "the build went on to Sphinx's own, unhelpful, message"


# -- learner copies -----------------------------------------------------------------------------
def test_learner_copy_source_only_for_exercises():
    assert learner_downloads.learner_source(ROOT, "exercises/b01-three-tokens") == ROOT / "exercises/learner/b01-three-tokens.md"
    assert learner_downloads.learner_source(ROOT, "exercises/index") is None
    assert learner_downloads.learner_source(ROOT, "chapters/overview") is None


def test_learner_notebook_is_valid_and_has_no_solution(tmp_path):
    target = tmp_path / "b01.ipynb"
    learner_downloads.write_learner_notebook(ROOT / "exercises/learner/b01-three-tokens.md", target)
    nb = nbformat.read(target, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert "jupytext" not in nb.metadata
    text = json.dumps(nb)
    assert "solution-start" not in text
    assert any("check(" in c.source for c in nb.cells if c.cell_type == "code")
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_downloaded_learner_notebooks_hold_no_relative_link(tmp_path):
    """A downloaded learner notebook stands alone (a learner's downloads, Colab): a relative link from it reaches
    nothing (reader t5, finding 10; review 5, finding 12 had made them relative to the built book). With the
    book's address known each link is the book's page, absolute; without it the link's text names the page."""
    base = "https://example.org/attn/"
    assert learner_downloads.download_links("[B01](b01-three-tokens.md) and [B01](b01-three-tokens.md#Output)",
                                            base) == ("[B01](https://example.org/attn/exercises/b01-three-tokens.html)"
                                                      " and [B01](https://example.org/attn/exercises/b01-three-tokens.html)")
    assert learner_downloads.download_links("[N](../../chapters/notation.md#Conventions)", base) == \
        "[N](https://example.org/attn/chapters/notation.html)"
    assert learner_downloads.download_links("[N](../../chapters/notation.md#Conventions)") == \
        "N (a page of the book, `chapters/notation`)"
    assert learner_downloads.download_links("[x](https://example.org/a.md)") == "[x](https://example.org/a.md)"
    learner = ROOT / "exercises" / "learner"
    linked = 0
    for src in sorted(learner.glob("*.md")):
        for url in (None, base):
            target = tmp_path / (src.stem + ".ipynb")
            learner_downloads.write_learner_notebook(src, target, base_url=url)
            text = "\n".join(c.source for c in nbformat.read(target, as_version=4).cells if c.cell_type == "markdown")
            assert not re.findall(r"\]\((?![a-z]+:)[^)]*\)", text), f"{src.name}: a relative link is left"
            for page in re.findall(r"\]\(https://example\.org/attn/([^)#]+)\.html\)", text):
                linked += 1
                assert (ROOT / page).with_suffix(".md").is_file(), (src.name, page)
            for page in re.findall(r"\(a page of the book, `([^`]+)`\)", text):
                assert (ROOT / page).with_suffix(".md").is_file(), (src.name, page)
    assert linked >= 10  # b04, e02, e03, e04, e06, e07 and v01 to v04 link to another page


def test_learner_notebook_installs_attn_only_where_missing(tmp_path):
    """With the book's repository known, the download starts with a cell that installs attn from it (Colab);
    where attn is installed the cell does nothing, and the notebook runs on."""
    from nbclient import NotebookClient

    target = tmp_path / "e01.ipynb"
    learner_downloads.write_learner_notebook(ROOT / "exercises/learner/e01-softmax.md", target,
                                             repository="https://github.com/someone/attn/")
    nb = nbformat.read(target, as_version=4)
    nbformat.validate(nb)
    first = nb.cells[0]
    assert first.cell_type == "code"
    assert "%pip install --quiet git+https://github.com/someone/attn.git" in first.source
    assert "except ImportError:" in first.source
    from attn.grading.runner.tampering import means
    assert means([first.source]) == []  # the teachers' grader takes it for honest work, not a way into it
    assert len({c.id for c in nb.cells}) == len(nb.cells), "cell ids must be unique"
    install_only = nbformat.v4.new_notebook(cells=[first], metadata=nb.metadata)
    NotebookClient(install_only, timeout=60, kernel_name="python3").execute()  # attn is here: no pip, no error
    assert not any(o.get("output_type") == "error" for o in install_only.cells[0].outputs)
    plain = tmp_path / "plain.ipynb"
    learner_downloads.write_learner_notebook(ROOT / "exercises/learner/e01-softmax.md", plain)
    assert "pip" not in nbformat.read(plain, as_version=4).cells[0].source


# -- inline code in tables wraps between names, never inside one ---------------------------------------------
def test_table_code_breaks_only_at_dots_brackets_and_long_underscores():
    cell = ('<table><tr><td><code class="docutils literal notranslate"><span class="pre">attn.attention_block(X_query,'
            '</span> <span class="pre">W_V)</span> <span class="pre">attn.derivatives.softmax_jacobian(w,</span>'
            '</code></td></tr></table>')
    out = offline_book.break_table_code(cell)
    pieces = [p for span in re.findall(r'<span class="pre">(.*?)</span>', out) for p in span.split("<wbr>")]
    assert pieces == ["attn.", "attention_", "block(", "X_query,", "W_V)", "attn.", "derivatives.", "softmax_",
                      "jacobian(", "w,"]
    assert re.sub(r"<wbr>", "", out) == cell                           # copying the code copies it unchanged
    prose = '<p><code class="docutils literal notranslate"><span class="pre">attn.scores</span></code></p>'
    assert offline_book.break_table_code(prose) == prose               # only tables


def test_table_code_may_not_break_anywhere():
    css = (ROOT / "_ext" / "offline_book_static" / "attn-layout.css").read_text()
    rules = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    assert "anywhere" not in rules and "break-all" not in rules, "a code name in a table would split mid-word"
