"""The notation page and the code agree: every name in its "in the code" column exists, with those parameters."""
import importlib
import inspect
import re
import typing
from pathlib import Path

import numpy as np
import pytest

import attn

PAGE = Path(__file__).resolve().parents[1] / "chapters" / "notation.md"

# The symbols the chapter's notation list names (seed page), plus the ones this book adds.
REQUIRED_SYMBOLS = [r"$Q$", r"$K$", r"$V$", r"$d_k$", r"$d_v$", r"$T$", r"$T_q$", r"$T_k$", r"$q$", r"$k$",
                    r"$\tau$", r"$\operatorname{softmax}$", r"$\operatorname{Var}$", r"$\nabla$", r"$S$", r"$W$",
                    r"$W_Q$", r"$W_K$", r"$W_V$", r"$M$"]
NO_CODE: set[str] = set()  # symbols allowed to have no checkable name in the code column

SNIPPET = re.compile(r"`([^`]+)`")
CALL = re.compile(r"^(attn|np)((?:\.\w+)+)(?:\(([^()]*)\))?((?:\.\w+)*)$")


def table_rows():
    """(symbol cell, code cell) for each row of the page's symbol table."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| symbol | shape | meaning | in the code |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        assert len(cells) == 4, f"a notation row must have 4 cells: {line}"
        rows.append((cells[0], cells[3]))
    return rows


def snippets(code_cell):
    """The checkable code in a cell: backticked ``attn.…`` or ``np.…`` names, calls and attributes."""
    return [m for s in SNIPPET.findall(code_cell) if (m := CALL.match(s.strip()))]


ROWS = table_rows()
CHECKS = [(sym, m.group(0)) for sym, code in ROWS for m in snippets(code)]


def test_table_names_every_symbol():
    symbols = " ".join(sym for sym, _ in ROWS)
    missing = [s for s in REQUIRED_SYMBOLS if s not in symbols]
    assert not missing, f"notation table lacks {missing}"


def test_every_row_but_the_exempt_names_code():
    bare = [sym for sym, code in ROWS if not snippets(code) and sym not in NO_CODE]
    assert not bare, f"rows with no attn/np name to check: {bare}"


def _resolve(root, dotted):
    obj = root
    for part in dotted.strip(".").split("."):
        if not hasattr(obj, part) and inspect.ismodule(obj):  # a submodule not imported yet: attn.calculus
            try:
                importlib.import_module(f"{obj.__name__}.{part}")
            except ModuleNotFoundError:
                pass
        assert hasattr(obj, part), f"{getattr(obj, '__name__', obj)!s} has no attribute {part!r}"
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("symbol,snippet", CHECKS, ids=[f"{s} {c}" for s, c in CHECKS])
def test_code_name_exists_with_its_parameters(symbol, snippet):
    module, dotted, args, after = CALL.match(snippet).groups()
    obj = _resolve(attn if module == "attn" else np, dotted)
    if args is None:
        return
    assert callable(obj), f"{snippet}: {dotted} is not callable"
    if module == "np":  # NumPy's ufuncs have no inspectable signature; existence is what we check
        return
    params = inspect.signature(obj).parameters
    for arg in filter(None, (a.strip() for a in args.split(","))):
        name = arg.split("=")[0].strip()
        assert name in params, f"{snippet}: {dotted}() has no parameter {name!r}; it has {list(params)}"
    if after:  # attributes of the result, e.g. attn.attention(...).weights
        returned = typing.get_type_hints(obj)["return"]
        _resolve(returned, after)


def test_page_uses_the_package_row_convention():
    """The shapes the page prints are those the functions return (a guard against a drifting table)."""
    O, W = attn.attention(np.ones((2, 4)), np.ones((5, 4)), np.ones((5, 3)))
    assert W.shape == (2, 5) and O.shape == (2, 3)
    assert attn.scores(np.ones((2, 4)), np.ones((5, 4))).shape == (2, 5)
