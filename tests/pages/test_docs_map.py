"""docs/DEVELOPING.md's map is true: every path and ``attn.`` name it writes in backticks exists, and every
module of src/attn is named in it."""
import functools
import importlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "DEVELOPING.md"
GENERATED = ("_build/", "vendor/")  # written by a build (the book's output), not kept in the repository
PATH_LIKE = re.compile(r"^[\w.-]+(/[\w.-]*)+$|^[\w-]+\.(py|md|yml|toml|txt|lock)$")


def spans():
    return re.findall(r"`([^`\n]+)`", DOC.read_text(encoding="utf-8"))


def named_paths():
    return sorted({s for s in spans() if PATH_LIKE.match(s) and not s.startswith((".", *GENERATED))})


def named_attn_names():
    return sorted({m.group(0) for s in spans() for m in re.finditer(r"(?<![\w.-])attn(?:\.\w+)+", s)})


@functools.cache
def file_names_in_the_repository() -> frozenset[str]:
    """Every file name below ROOT, leaving out what set-up and builds write (.venv, node_modules, _build, dot-folders).

    A walk of ``ROOT.glob("**/name")`` per name went through .venv twice (lib64 links to lib) and the built
    book: minutes in a clone after a build."""
    names = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "_build")]
        names.update(files)
    return frozenset(names)


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ModuleNotFoundError:
            continue
        for attr in parts[n:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_the_map_names_enough_to_be_checked():
    assert len(named_paths()) > 50 and len(named_attn_names()) > 20


@pytest.mark.parametrize("path", named_paths())
def test_every_path_named_exists(path):
    if "/" in path:
        assert (ROOT / path).exists(), f"docs/DEVELOPING.md names {path}, which does not exist"
    else:  # a bare file name, in a sentence that gives its folder
        assert path in file_names_in_the_repository(), f"docs/DEVELOPING.md names {path}, found nowhere"


@pytest.mark.parametrize("name", named_attn_names())
def test_every_attn_name_named_exists(name):
    assert resolves(name), f"docs/DEVELOPING.md names {name}, which does not import"


def test_every_module_of_the_package_is_in_the_map():
    named = set(named_paths())
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "src" / "attn").rglob("*.py"))
    missing = [m for m in modules if m not in named]
    assert not missing, f"docs/DEVELOPING.md's map leaves out {missing}"


# -- the one-hop table: a row's function and explorer are what its tests test --------------------------------
def one_hop_rows():
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| concept | page | function | explorer | test |"):]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        concept, _page, function, explorer, tests = cells
        rows.append((concept,
                     [m.split(".")[-1] for m in re.findall(r"`(attn(?:\.\w+)+)`", function)],
                     re.findall(r"`src/attn/widgets/(\w+)\.py`", explorer),
                     re.findall(r"`(tests/[\w/.-]+\.py)`", tests)))
    return rows


def test_the_one_hop_table_has_its_rows():
    assert len(one_hop_rows()) >= 8


@pytest.mark.parametrize("concept, functions, explorers, tests", one_hop_rows(), ids=lambda v: str(v)[:30])
def test_a_rows_tests_exercise_its_function_and_explorer(concept, functions, explorers, tests):
    assert tests, f"the row {concept!r} names no test"
    source = "\n".join((ROOT / t).read_text(encoding="utf-8") for t in tests)
    for name in functions:
        used = rf"\.{name}\b|\b{name}\s*\(|import [^\n]*\b{name}\b"  # called, an attribute or imported; not a word in prose
        assert re.search(used, source), f"the row {concept!r} names {name}, which none of {tests} uses"
    for module in explorers:
        assert re.search(rf"widgets\.{module}\b|widgets import .*\b{module}\b", source), (
            f"the row {concept!r} names the explorer attn.widgets.{module}, which none of {tests} imports")


def test_a_browser_test_line_reads_the_folder_bin_build_book_writes():
    text = DOC.read_text(encoding="utf-8")
    built = {d + "/html" for d in re.findall(r"`bin/build-book ([^`\s]+)`", text)}
    named = re.findall(r"ATTN_BOOK_HTML=(\S+)", text)
    assert named and built
    for html in named:
        assert html in built, f"ATTN_BOOK_HTML={html}, but `bin/build-book DIR` writes the pages to DIR/html ({built})"


# -- the README: its layout table and the teachers' options --------------------------------------------------
README = ROOT / "README.md"


def readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def layout_rows() -> dict[str, str]:
    rows = {}
    for line in readme_section("Layout").splitlines():
        if line.startswith("| `"):
            first, rest = line.strip("|").split("|", 1)
            for path in re.findall(r"`([^`]+)`", first):
                rows[path] = rest
    return rows


def test_every_path_in_the_readme_layout_exists():
    for path in layout_rows():
        assert (ROOT / path).exists(), f"README's layout names {path}, which does not exist"


def test_the_readme_layout_covers_every_top_level_entry():
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {p.split("/")[0] + ("/" if "/" in p else "") for p in tracked.split("\0") if p}
    top -= {"README.md", ".gitignore"}
    missing = sorted(t for t in top if not any(path.startswith(t) for path in layout_rows()))
    assert not missing, f"README's layout leaves out {missing}"


def test_the_readme_layout_names_every_script_in_bin():
    named = set(re.findall(r"`([\w.-]+)`", layout_rows()["bin/"]))
    missing = sorted(p.name for p in (ROOT / "bin").iterdir() if p.is_file() and p.name not in named)
    assert not missing, f"README's layout row for bin/ leaves out {missing}"


def test_the_readme_names_every_option_of_attn_grade_and_no_other():
    from attn.grading.runner.cli import parser

    actions = [set(a.option_strings) for a in parser()._actions if a.option_strings and "--help" not in a.option_strings]
    section = readme_section("Grading a class (teachers)")
    prose = re.sub(r"```.*?```", "", section, flags=re.S)  # the code block's commands are not spans
    named = {m for s in re.findall(r"`([^`]+)`", prose) if s.startswith("-") for m in re.findall(r"--?[\w-]+", s)}
    known = set().union(*actions)
    assert not named - known, f"README names attn-grade options that do not exist: {sorted(named - known)}"
    left_out = [sorted(a) for a in actions if not a & named]
    assert not left_out, f"README leaves out attn-grade's options {left_out}"
