"""The teachers' grader (attn.grading.batch): sample submissions give the expected CSV; blank and solved notebooks.

Kept fast: a 3 s cell limit and one kernel per notebook (7 sample notebooks, one blank, one solved).
"""
import csv
import json
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from attn.grading import batch, learner

ROOT = Path(__file__).resolve().parents[1]
SUBMISSIONS = ROOT / "tests" / "data" / "submissions"
EXPECTED = ROOT / "tests" / "data" / "submissions-expected.csv"
COMPARED = ["learner", "file", "item", "status", "parts_correct", "parts_total", "mistakes"]
EXERCISES = [f"E{i:02d}" for i in range(1, 11)]


# ----------------------------------------------------------------------------- pieces, without a kernel
def test_the_learners_own_grading_calls_are_removed_and_nothing_else():
    src = 'x = 1; check("E01")\ncheck("E02",\n      "a")\nv.check("w")\ny = hint("E01")\nprogress()\nz = 2  # é'
    out = batch.strip_grader_calls(src)
    assert "check" not in out and "hint" not in out and "progress" not in out
    ns = {}
    exec(out, ns)
    assert ns["x"] == 1 and ns["z"] == 2
    assert batch.strip_grader_calls("%timeit f(x)") == "%timeit f(x)"  # not Python: kept as it is


def test_items_and_seeds_are_read_from_the_notebook():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('check("E01", "softmax")\nhint("II.3.B01")'),
        nbformat.v4.new_code_cell('v = variant("V01", 7)\ncheck("V02", "weights", seed=3)'),
        nbformat.v4.new_markdown_cell('check("E09")'),
    ])
    assert batch.items_in(nb) == {"E01": None, "B01": None, "V01": 7, "V02": 3}


def test_the_learner_is_the_stem_the_folder_or_the_metadata(tmp_path):
    nb = nbformat.v4.new_notebook()
    p = tmp_path / "bob" / "e01.md"
    assert batch.learner_of(p, nb) == "e01"
    assert batch.learner_of(p, nb, "parent") == "bob"
    nb.metadata["attn"] = {"learner": "Robert"}
    assert batch.learner_of(p, nb, "parent") == "Robert"
    assert batch.learner_of(SUBMISSIONS / "right.md", batch.read_notebook(SUBMISSIONS / "right.md")) == "alice"


@pytest.mark.parametrize("name, status", [("notes.txt", "not a notebook"), ("empty.md", "empty"),
                                          ("broken.ipynb", "not a notebook")])
def test_bad_files_get_a_row_saying_so(name, status):
    rows = batch.grade_file(SUBMISSIONS / name)
    assert [r["status"] for r in rows] == [status] and rows[0]["message"]


# ----------------------------------------------------------------------------- the command line on the samples
@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("grades") / "grades"
    proc = subprocess.run(
        [sys.executable, "-m", "attn.grading.batch", str(SUBMISSIONS), "-o", str(out), "--cell-timeout", "3",
         "--grade-timeout", "60"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_the_cli_gives_the_expected_csv(sample_report):
    out, proc = sample_report
    got = [{k: (Path(r[k]).name if k == "file" else r[k]) for k in COMPARED}
           for r in csv.DictReader(open(out.with_suffix(".csv"), encoding="utf-8"))]
    want = list(csv.DictReader(open(EXPECTED, encoding="utf-8")))
    key = lambda r: (r["file"], r["item"])  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    assert "grading" in proc.stderr and "wrote" in proc.stderr  # the tqdm bar and the summary


def test_the_json_report_holds_every_parts_feedback(sample_report):
    out, _ = sample_report
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert report["format"] == "attn-grades" and report["options"]["cell_timeout"] == 3.0
    rows = {(Path(r["file"]).name, r["item"]): r for r in report["rows"]}
    e01 = rows[("junk.ipynb", "E01")]["detail"][0]
    assert "NameError" in e01["message"] and "undefined_scale" in e01["message"] and "line 3" in e01["message"]
    loop = rows[("loop.md", "E01")]
    assert "did not return within" in loop["detail"][0]["message"]
    assert any("time limit" in n["error"] for n in loop["notes"])
    assert rows[("loop.md", "E02")]["status"] == "correct"  # cells after the endless loop still ran
    assert "died" in rows[("kernel-dies.md", "E10")]["message"]
    assert "ZeroDivisionError" in rows[("crashing-cell.md", "E06")]["message"]
    assert "raised NameError" in rows[("junk.ipynb", "E07")]["message"]
    for r in report["rows"]:  # messages never show an expected array
        assert "[[" not in r["message"]


def _joined(pages) -> Path:
    """One notebook made of several pages (one kernel for all of them)."""
    cells = []
    for p in pages:
        cells += jupytext.read(p).cells
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                          "display_name": "Python 3"}})


def test_blank_learner_notebooks_are_not_tried_for_every_item(tmp_path):
    pages = [learner.copy_path(p, ROOT) for p in learner.pages(ROOT) if p.name.startswith("e")]
    assert len(pages) == 10
    path = tmp_path / "blank.ipynb"
    nbformat.write(_joined(pages), path)
    rows = batch.grade_file(path, cell_timeout=30)
    assert {r["item"]: r["status"] for r in rows} == {i: "not tried" for i in EXERCISES}


def test_solved_notebooks_get_full_marks(tmp_path):
    pages = [p for p in learner.pages(ROOT) if p.name.startswith("e")]  # the book pages, solutions included
    path = tmp_path / "solved.ipynb"
    nbformat.write(_joined(pages), path)
    rows = batch.grade_file(path, cell_timeout=60)
    assert {r["item"]: (r["status"], r["score"]) for r in rows} == {i: ("correct", 1.0) for i in EXERCISES}


def test_the_console_script_is_declared():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["attn-grade"] == "attn.grading.batch:main"
