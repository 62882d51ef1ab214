"""The book as the tests build and read it: from clean, every notebook executed, strict (the session fixture
``book_build`` in tests/conftest.py builds it once per test session), and the pages its table of contents lists."""
import ast
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
# Signs in the build's log that a kernel, not a page, failed (a lost message on a busy machine).
KERNEL_TROUBLE = ("CellTimeoutError", "DeadKernelError", "Kernel didn't respond", "Kernel died")
BUILDS = pytest.StashKey[list]()  # the builds of this session (config.stash), made by the fixture book_build


def build() -> subprocess.CompletedProcess:
    """The README's build command itself (bin/build-book: set-up, then a clean strict parallel build)."""
    return subprocess.run([str(ROOT / "bin" / "build-book"), "--clean"], cwd=ROOT, capture_output=True, text=True)


def kernel_trouble(result: subprocess.CompletedProcess) -> bool:
    """The build failed, and its log says a kernel stopped answering (the machine's fault, not a page's)."""
    return result.returncode != 0 and any(sign in result.stdout + result.stderr for sign in KERNEL_TROUBLE)


def built_cleanly(config: pytest.Config) -> bool:
    """This session has already built the book from clean, strictly, and the build passed."""
    builds = config.stash.get(BUILDS, [])
    return bool(builds) and builds[-1].returncode == 0


def _toc_files(entries) -> list[str]:
    files = []
    for entry in entries or []:
        if "file" in entry:
            files.append(entry["file"])
        for key in ("sections", "chapters", "parts"):
            files += _toc_files(entry.get(key))
    return files


def toc_pages() -> list[str]:
    """Every page of the table of contents, as its path in _build/html (e.g. chapters/overview.html)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + _toc_files(toc.get("parts")) + _toc_files(toc.get("chapters"))
    return [re.sub(r"\.(md|ipynb)$", "", f) + ".html" for f in files]


def code_cell_trees(text: str) -> list[ast.Module]:
    """The parsed code of every code cell of a MyST page (its option lines and magics left out; a cell that is not
    Python even then is skipped), for the tests that read what the pages' code does."""
    trees = []
    for m in re.finditer(r"```\{code-cell\}[^\n]*\n(?P<body>.*?)\n```", text, re.S):
        body = "\n".join(line for line in m.group("body").splitlines()
                         if not line.startswith((":", "%", "!")) and line != "---")
        try:
            trees.append(ast.parse(body))
        except SyntaxError:
            continue
    return trees


RAW_SCORE = re.compile(  # a score is scaled (notation page): the raw dot product q·k is never one
    r"\b(?:raw|unscaled)\s+scores?\b"                                             # "a raw score", across lines too
    r"|\bunscaled\s+(?:Q\s*Kᵀ|\$?QK\^)"                                             # "the unscaled Q Kᵀ"
    r"|\bdivid\w*\s+(?:every|each|the|all)\s+scores?\s+by\s+(?:\$?\\sqrt|√|\$?d_k\b)"  # scores are already divided
    r"|\bscores?\s+(?:before|without)\s+the\s+(?:\$?1/\\sqrt|1/√|\$?\\sqrt|√|scale|division)"
    r"|\bscores?\W{0,3}\s+\$?(?:QK\^\\top|QK\^T|Q\s*Kᵀ)\$?(?!\s*/)"                # "**scores** $QK^\top$"
    r"|\bscores?\s+(?:are\s+|is\s+)?divided\s+by\s+(?:\$?\\sqrt|√|\$?d_k\b)|\bscores\s+that\s+far\s+apart"
    r"|\bscores? (?:whose|with) spread is \$\\sqrt|\bscores? \$?q\s*\\?cdot\s*k\$?(?!\s*/)", re.I)


def raw_scores(text: str) -> list[str]:
    """The places in ``text`` that call the raw dot product q·k (or QKᵀ) a score."""
    return [m.group(0) for m in RAW_SCORE.finditer(text)]
