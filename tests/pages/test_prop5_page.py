"""Proposition 5's page reads the committed benchmark results as data: it must build whatever numbers
another machine's `bin/bench` wrote (no import of the benchmark package through sys.path, no assertion on
those numbers), and it asserts only what the build measures itself."""
import re
from pathlib import Path

import jupytext

PAGE = Path(__file__).resolve().parents[2] / "chapters" / "prop5-quadratic-cost.md"


def code_cells():
    nb = jupytext.read(PAGE)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def test_page_does_not_reach_into_the_repository_for_code():
    src = "\n".join(code_cells())
    assert "sys.path" not in src
    assert not re.search(r"^\s*(from|import)\s+benchmarks\b", src, re.M)


def test_no_assertion_on_the_recorded_benchmark():
    readers = [c for c in code_cells() if "latest.json" in c]
    assert len(readers) == 1, "one cell reads benchmarks/results/latest.json"
    assert not re.search(r"^\s*assert\b", readers[0], re.M), "the recorded run is data: report it, do not assert on it"


def test_the_measured_slopes_are_asserted_in_the_build():
    measured = [c for c in code_cells() if "QuadraticCostExplorer()" in c]
    assert measured and re.search(r"assert .*fit_naive\.slope", measured[0])
    assert not re.search(r"LogLogFit\(|print\(explorer\.fit_", "\n".join(code_cells())), "print results formatted"
