"""Launch buttons and links, checked as far as they can be without a network: the Binder button exists
exactly when the book knows its repository (_config.yml's repository.url, else the checkout's git remote;
_ext/launch_buttons.py), and then every notebook page offers it, naming that repository and a file that
exists in it; Binder's environment (binder/) parses and opens the .md pages as notebooks; no Colab or
JupyterLite button (they cannot open MyST .md notebooks here); every local link and resource of every page
exists in the build."""
import ast
import html
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import jupytext
import pytest
import yaml
from packaging.requirements import Requirement

from book import ROOT
from browsing import PAGES, toc_pages

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
sys.path.insert(0, str(ROOT / "_ext"))
import launch_buttons  # noqa: E402

# the repository the build resolved (the same function, on the same checkout)
REPOSITORY, BRANCH = launch_buttons.repository(ROOT, CONFIG["repository"].get("url") or "",
                                               CONFIG["repository"].get("branch") or "main")
BINDER = ROOT / "binder"


def _source(page: str) -> Path:
    stem = page.removesuffix(".html")
    for ext in (".md", ".ipynb"):
        if (ROOT / (stem + ext)).exists():
            return ROOT / (stem + ext)
    raise AssertionError(f"no source for {page}")


def _is_notebook(path: Path) -> bool:
    return path.suffix == ".ipynb" or path.read_text(encoding="utf-8").startswith("---\njupytext:")


NOTEBOOK_PAGES = [p for p in toc_pages() if (ROOT / p.removesuffix(".html")).with_suffix(".md").exists()
                  and _is_notebook(_source(p))]


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_binder_button_opens_this_page(book_html, name):
    text = (book_html / name).read_text(encoding="utf-8")
    links = [html.unescape(u) for u in re.findall(r'href="(https://mybinder\.org/[^"]+)"', text)]
    if REPOSITORY is None:
        assert not links, f"{name}: launch links {links} although the book knows no repository to launch"
        assert "launch-buttons" not in text and "logo_binder" not in text, f"{name}: a launch menu without a repository"
        assert "_sources/" + name.removesuffix(".html") + ".ipynb" in text, f"{name}: the executed .ipynb is no longer offered"
        return
    assert len(links) == 1, f"{name}: expected one Binder launch link, found {links}"
    url = urlsplit(links[0])
    repo = urlsplit(REPOSITORY).path.strip("/")
    assert url.path == f"/v2/gh/{repo}/{BRANCH}", f"{name}: Binder link {links[0]} does not name {repo}@{BRANCH}"
    urlpath = unquote(parse_qs(url.query)["urlpath"][0])
    assert urlpath.startswith("lab/tree/"), f"{name}: Binder should open JupyterLab (lab/tree/...), got {urlpath}"
    target = ROOT / urlpath.removeprefix("lab/tree/")
    assert target.is_file(), f"{name}: Binder link opens {target.relative_to(ROOT)}, which is not in the repository"
    assert target == _source(name), f"{name}: Binder link opens {target.relative_to(ROOT)}, not this page's source"


@pytest.mark.parametrize("name", PAGES)
def test_no_launcher_that_cannot_open_md(book_html, name):
    text = (book_html / name).read_text(encoding="utf-8")
    for host in ("colab.research.google.com", "jupyterlite", "deepnote.com"):
        assert host not in text, f"{name}: offers {host}, which cannot open this book's MyST .md notebooks"


@pytest.mark.parametrize("name", PAGES)
def test_local_links_exist(book_html, name):
    text = (book_html / name).read_text(encoding="utf-8")
    base = (book_html / name).parent
    missing = []
    for attr, url in re.findall(r'\s(href|src)="([^"]+)"', text):
        url = html.unescape(url)
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith(("#", "//")):
            continue  # external (checked above for launchers; blocked in the browser tests) or in-page
        path = unquote(url.split("#")[0].split("?")[0])
        if path and not (base / path).exists():
            missing.append(url)
    assert not missing, f"{name}: links to files not in the build: {sorted(set(missing))[:10]}"


# -- Binder's environment ------------------------------------------------------------------------
def _binder_requirements() -> list[Requirement]:
    lines = (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [Requirement(line.split("#")[0].strip()) for line in lines if line.split("#")[0].strip()]


def test_binder_requirements_parse_and_cover_the_pages():
    names = {r.name.lower().replace("_", "-") for r in _binder_requirements()}
    assert {"jupyterlab", "jupytext", "ipywidgets", "numpy", "matplotlib"} <= names, names
    # every module the pages import is the attn package (postBuild), a package of this repository (Binder
    # clones it; Prop 5 reads the benchmark results through benchmarks.report), the standard library or a
    # requirement
    provides = {"myst_nb": "myst-nb", "matplotlib": "matplotlib", "numpy": "numpy", "ipywidgets": "ipywidgets",
                "IPython": "ipykernel", "mpl_toolkits": "matplotlib"}
    unmet = set()
    for page in toc_pages():
        src = _source(page)
        if not _is_notebook(src):
            continue
        for cell in jupytext.read(src).cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse("\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("%", "!"))))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
                for mod in mods:
                    top = mod.split(".")[0]
                    if top == "attn" or top in sys.stdlib_module_names or (ROOT / top / "__init__.py").exists():
                        continue
                    if provides.get(top, top).lower() not in names:
                        unmet.add(f"{top} ({page})")
    assert not unmet, f"modules the pages import that binder/requirements.txt does not install: {sorted(unmet)}"


def test_binder_postbuild_installs_attn_and_opens_md_as_notebooks():
    post = BINDER / "postBuild"
    text = post.read_text(encoding="utf-8")
    assert text.startswith("#!"), "postBuild needs a shebang"
    assert post.stat().st_mode & 0o111, "postBuild must be executable"
    subprocess.run(["bash", "-n", str(post)], check=True)
    assert re.search(r"pip install .*(-e )?\.(\s|$)", text), "postBuild must install the attn package"
    assert re.search(r"jupytext-config set-default-viewer", text), "postBuild must make .md open as notebooks"


def test_binder_runtime():
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    assert re.fullmatch(r"python-3\.\d+", runtime), runtime
