"""docs/DEVELOPING.md's map is true: every path and ``attn.`` name it writes in backticks exists, and every
module of src/attn is named in it."""
import importlib
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
        assert list(ROOT.glob(f"**/{path}")), f"docs/DEVELOPING.md names {path}, found nowhere"


@pytest.mark.parametrize("name", named_attn_names())
def test_every_attn_name_named_exists(name):
    assert resolves(name), f"docs/DEVELOPING.md names {name}, which does not import"


def test_every_module_of_the_package_is_in_the_map():
    named = set(named_paths())
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "src" / "attn").rglob("*.py"))
    missing = [m for m in modules if m not in named]
    assert not missing, f"docs/DEVELOPING.md's map leaves out {missing}"
