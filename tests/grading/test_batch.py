"""The teachers' grader (attn.grading.batch): every sample, attack and limit in tests/data/submissions gets the
expected row, in one sandboxed run with two jobs; side effects checked after it; resume; Dask; blank and solved.

Kept to a few minutes: a 5 s cell limit, a 20 s notebook cap and --jobs 2 (about 30 notebooks).
"""
import csv
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest

import attn
from attn.grading import batch, learner
from attn.grading.items import get_item

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = ROOT / "tests" / "data" / "submissions"
EXPECTED = ROOT / "tests" / "data" / "submissions-expected.csv"
COMPARED = ["learner", "claimed", "file", "item", "status", "parts_correct", "parts_total", "mistakes", "flags"]
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


def test_answers_passed_to_check_are_kept_as_the_variables_check_judged():
    # check("B01", scores=S) and check("B01", "output", W @ V) judge S and W @ V in the notebook (a documented form);
    # removing the call must not lose them: the grader reads the part's variable, so it is assigned instead
    src = ('S = 2.0\ncheck("B01", scores=S, weights=S + 1)\nx = check("II.3.B01", "output", S * 3,\n    seed=None)\n'
           'check("E01", lambda x, tau=1.0: x)\nv.check(tau_two=S / 2)\ncheck("B01", "scores")\nhint("B01")\n'
           'check("B01", bogus=1, **{"weights": 9})\nprint(check("E08", tau=S * 4))')
    out = batch.strip_grader_calls(src)
    assert "check(" not in out and "hint" not in out
    ns = {"v": None}
    exec(out, ns)
    assert (ns["scores"], ns["weights"], ns["output"], ns["tau_two"], ns["tau"]) == (2.0, 3.0, 6.0, 1.0, 8.0)
    assert ns["softmax"](5) == 5 and "x" not in ns and "bogus" not in ns


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
    assert batch.learner_of(p, nb, "parent") == "bob"  # a notebook's claim never decides its row


def test_an_id_that_is_no_item_is_a_note_never_an_item_of_the_class_report(tmp_path, capsys):
    # check("Z99") (a typo, or a hostile notebook) once gave an "error" row that became an item of the report
    from attn.grading.runner import report, rows

    nb = tmp_path / "typo.md"
    nb.write_text("```python\nfrom attn.grading import check\ncheck('Z99')\ncheck('II.3.Q12', 'x', 1)\n```\n")
    got = batch.grade_file(nb, sandboxed=False)  # no item left: no kernel is started
    assert [(r["item"], r["status"]) for r in got] == [("", "no items")]
    assert "'Z99', 'Q12'" in got[0]["message"] and "are not items" in got[0]["message"]
    page = report.write_html([rows.make_row("bob", "bob.md", "Z99", status="error", message="no item"),
                              rows.make_row("bob", "bob.md", "B01", status="correct")], tmp_path / "r.html").read_text()
    items_table = page.split("<h2>Items</h2>")[1].split("</table>")[0]
    assert "B01" in items_table and "Z99" not in items_table and "Z99" not in page.split("<h2>Items</h2>")[0]
    with pytest.raises(SystemExit):
        batch.main([str(nb), "--items", "B01,Z99", "-o", str(tmp_path / "g"), "--no-sandbox"])
    assert "no item Z99" in capsys.readouterr().err


@pytest.mark.parametrize("name, status", [("notes.txt", "not a notebook"), ("empty.md", "empty"),
                                          ("broken.ipynb", "not a notebook"),
                                          ("attacks/yaml-bomb.md", "not a notebook")])  # never expanded
def test_bad_files_get_a_row_saying_so(name, status):
    rows = batch.grade_file(SUBMISSIONS / name)
    assert [r["status"] for r in rows] == [status] and rows[0]["message"]


def test_a_link_to_a_device_or_a_named_pipe_never_hangs_the_grader(tmp_path):
    """A link to /dev/zero among the submissions was read whole to key the journal (gigabytes of memory, no end);
    a named pipe named on the command line blocked the read. Neither is read now, and each gets its row."""
    import os
    import threading

    from attn.grading.runner import cli

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe.md")
    done = {}
    worker = threading.Thread(target=lambda: done.update(
        keys=[cli._key(p) for p, _ in cli.expand([folder])] + [cli._key(folder / "pipe.md")],
        rows=batch.grade_file(folder / "pipe.md", sandboxed=False)), daemon=True)
    worker.start()
    worker.join(10)  # (short: a regression reads /dev/zero into memory while it waits)
    assert not worker.is_alive(), "the grader hung on a link to /dev/zero or on a named pipe"
    assert done["keys"][0].endswith("#link:" + __import__("hashlib").sha256(b"/dev/zero").hexdigest()[:20])
    assert done["keys"][1].endswith("#special")
    assert [r["status"] for r in done["rows"]] == ["not a notebook"] and "regular file" in done["rows"][0]["message"]


# ----------------------------------------------------------------------------- the command line on every sample
def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _evil_processes() -> list[str]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
            uid = int(next(line.split()[1] for line in (d / "status").read_text().splitlines()
                           if line.startswith("Uid:")))
        except (OSError, StopIteration, ValueError):
            continue
        if b"attn-evil" in cmd or uid >= 200_000:  # the sandboxes' own user ids (as root) start at 200000
            found.append(cmd.replace(b"\0", b" ").decode(errors="replace")[:120])
    return found


def _guarded() -> dict:
    """Files a submission must not change: the attn package, the venv's site-packages .pth files, IPython startup."""
    import site

    paths = [p for p in (ROOT / "src" / "attn").rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for d in site.getsitepackages():
        paths += list(Path(d).glob("*.pth"))
    paths += list((Path.home() / ".ipython").rglob("startup/*"))
    return {str(p): p.read_bytes() for p in paths}


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class") / "submissions"
    shutil.copytree(SUBMISSIONS, folder, symlinks=True)  # rows/readme-link.md stays a link
    before, guarded = _tree(folder), _guarded()
    out = folder / "grades"  # in the graded folder itself: a second run must not grade these files
    proc = subprocess.run(
        [sys.executable, "-m", "attn.grading.batch", str(folder), "-o", str(out), "--cell-timeout", "5",
         "--notebook-timeout", "20", "--grade-timeout", "60", "--jobs", "2"], capture_output=True, text=True,
        timeout=900)
    assert proc.returncode == 0, proc.stderr
    csv_text = out.with_suffix(".csv").read_bytes()
    time.sleep(3)  # a daemon left behind would rewrite grades.csv now
    return {"out": out, "proc": proc, "folder": folder, "before": before, "guarded": guarded, "csv": csv_text}


def _rows(out: Path) -> list[dict]:
    return [{k: (str(Path(r["file"]).relative_to(out.parent)) if k == "file" else r[k]) for k in COMPARED}
            for r in csv.DictReader(open(out.with_suffix(".csv"), encoding="utf-8"))]


def test_every_sample_attack_and_limit_gets_its_expected_row(sample_report):
    got = _rows(sample_report["out"])
    want = list(csv.DictReader(open(EXPECTED, encoding="utf-8")))
    key = lambda r: (r["file"], r["item"])  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    assert "grading" in sample_report["proc"].stderr and "wrote" in sample_report["proc"].stderr


def test_wrong_answers_stay_wrong_whatever_the_notebook_does_to_the_grader(sample_report):
    rows = {r["file"]: r for r in _rows(sample_report["out"])}
    for attack in ("allclose", "display", "transformer", "startup-pth", "write-src"):
        r = rows[f"attacks/{attack}.md"]
        assert (r["item"], r["status"], r["parts_correct"]) == ("B01", "not yet", "0"), attack
    for attack in ("argv", "copy-blank", "daemon"):  # right only if they saw the grader or another learner
        assert rows[f"attacks/{attack}.md"]["status"] == "not yet", attack
    raw = {Path(r["file"]).name: r for r in csv.DictReader(open(sample_report["out"].with_suffix(".csv"), encoding="utf-8"))}
    assert raw["leftover.md"]["parts"] == "tau_two=correct; tau=not yet"  # its own answers are still judged


def test_code_that_reaches_the_hand_over_or_the_expected_answers_gets_no_credit_until_reviewed(sample_report):
    """A forged answer line (code of the notebook's read the nonce and printed its own) and the routes to the
    grader's objects are rows marked "review", whatever the values they hand over; honest magics are no means."""
    report = json.loads(sample_report["out"].with_suffix(".json").read_text(encoding="utf-8"))
    rows = {str(Path(r["file"]).relative_to(sample_report["folder"])): r for r in report["rows"]}
    forged = rows["attacks/forged-line.md"]
    assert forged["status"] == "review" and "printed 2 times" in forged["message"] and forged["score"] == ""
    for name in ("attacks/getattr-expected.md", "attacks/expected-by-alias.md", "rows/reads-expected.md"):
        r = rows[name]
        assert (r["status"], r["score"], r["parts_correct"]) == ("review", "", ""), name
        assert r["parts"] == "tau_two=correct; tau=correct" and "no credit until a person has read it" in r["message"]
    assert rows["honest-magics.md"]["status"] == "correct" and rows["honest-magics.md"]["flags"] == ""


def test_checks_in_the_grader_record_and_never_judge(sample_report):
    """The learner's checks run in the grader's kernel, top-level ones too: each records the answers it saw and
    returns a truthy note, never a verdict. So ``fb = check(...)`` binds ``fb``; two problems with the same
    variable names are each judged on the answers their own check saw; a variant's seed comes from its check; and a
    loop that searches with check learns nothing (it stops at its first try)."""
    rows = {r["file"]: r for r in _rows(sample_report["out"]) if r["file"] != "two-problems.md"}
    for name in ("fb-then-use.md", "checked-seed.md"):
        assert (rows[name]["status"], rows[name]["parts_correct"]) == ("correct", "3"), name
    both = {r["item"]: r["status"] for r in _rows(sample_report["out"]) if r["file"] == "two-problems.md"}
    assert both == {"B01": "correct", "B04": "correct"}
    oracle = rows["attacks/check-oracle.md"]
    assert oracle["status"] == "not yet" and oracle["parts_correct"] == "0"
    fishing = rows["attacks/seed-fishing.md"]  # a blind answer fits one of eight seeds: never credit
    assert (fishing["status"], fishing["parts_correct"], fishing["flags"]) == ("review", "", "many_seeds")


def test_text_no_encoding_can_write_never_stops_the_run(sample_report, tmp_path):
    """A lone surrogate in a learner's error message or metadata, or a file name that is not UTF-8, is written as
    its escape: the file keeps its row and the run its reports (they once crashed the whole run, and every resume).
    A submission that starts like one of the grader's reports is graded all the same."""
    import os

    raw = {Path(r["file"]).name: r for r in csv.DictReader(open(sample_report["out"].with_suffix(".csv"),
                                                                  encoding="utf-8"))}
    assert "\\ud800" in raw["surrogate-error.md"]["message"] and raw["claimed-surrogate.ipynb"]["claimed"] == "Kim \\ud800"
    assert raw["looks-like-a-report.md"]["status"] == "not yet"
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "honest-magics.md", folder / os.fsdecode(b"Jos\xe9.md"))
    out = tmp_path / "grades"
    proc = subprocess.run(_cli(folder, "-o", out), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (row,) = csv.DictReader(open(out.with_suffix(".csv"), encoding="utf-8"))
    assert (row["learner"], row["status"]) == ("Jos\\udce9", "correct")


def test_no_file_outside_the_sandbox_changed_and_nothing_is_left_running(sample_report):
    folder = sample_report["folder"]
    after = _tree(folder)
    outputs = {"grades.csv", "grades.json", "grades.html", "grades.journal.jsonl"}
    assert {k: v for k, v in after.items() if k not in outputs} == sample_report["before"]  # alice.md not blanked
    assert _guarded() == sample_report["guarded"]  # attn, .pth files, IPython startup files untouched
    assert sample_report["out"].with_suffix(".csv").read_bytes() == sample_report["csv"]  # no daemon rewrote it
    assert _evil_processes() == []


def test_the_limits_keep_the_run_going(sample_report):
    report = json.loads(sample_report["out"].with_suffix(".json").read_text(encoding="utf-8"))
    rows = {(str(Path(r["file"]).relative_to(sample_report["folder"])), r["item"]): r for r in report["rows"]}
    ignores = rows[("limits/ignores-interrupt.md", "E08")]  # killed, restarted; answers before and after graded
    assert ignores["status"] == "correct" and "cell 3" in ignores["message"] and "ignored the interrupt" in ignores["message"]
    keyboard = rows[("limits/keyboard-interrupt.md", "E08")]
    assert [n["error"] for n in keyboard["notes"]] == ["KeyboardInterrupt"]  # raised, not a timeout
    assert "OutputCapped" in rows[("limits/print-flood.md", "E08")]["message"]
    resources = rows[("limits/resources.md", "E08")]  # memory and file-size limits: errors in those cells only
    assert [n["error"].split(":")[0] for n in resources["notes"]] == ["MemoryError", "OSError"]
    slow = rows[("limits/slow.md", "E08")]
    assert slow["status"] == "correct" and "WallClock" in slow["message"]
    assert rows[("limits/swallows-alarm.md", "E01")]["mistakes"] == "timeout"
    assert rows[("limits/swallows-alarm.md", "E09")]["status"] == "correct"  # only its own part lost
    dies = rows[("kernel-dies.md", "E10")]
    assert dies["detail"][0]["status"] == "correct" and "KernelRestart" in dies["message"]  # cause, set before


def test_rows_a_teacher_can_rely_on(sample_report):
    out = sample_report["out"]
    raw = list(csv.DictReader(open(out.with_suffix(".csv"), encoding="utf-8")))
    formula = next(r for r in raw if r["file"].endswith("formula.md"))
    assert formula["claimed"].startswith("'=")  # neutralised for spreadsheets
    for r in raw:
        for v in r.values():
            assert not v.startswith(("=", "+", "-", "@", "\t", "\r")), v
    rows = {r["file"]: r for r in _rows(out)}
    assert rows["rows/mallory.md"]["learner"] == "mallory" and rows["rows/mallory.md"]["claimed"] == "bob"
    assert "claims_other_learner" in rows["rows/mallory.md"]["flags"]
    nfd = next(r for f, r in rows.items() if f.startswith("rows/caf"))
    assert nfd["learner"] == "caf\u00e9" and "claims_other_learner" not in nfd["flags"]  # NFC: one learner
    assert "reads_expected" in rows["rows/reads-expected.md"]["flags"]
    assert rows["rows/readme-link.md"]["status"] == "skipped"  # a symbolic link is never followed
    by_item = {(r["file"], r["item"]): r for r in _rows(out)}
    assert "duplicate" in by_item[("rows/alice/alice.md", "E08")]["flags"]
    assert "duplicate" in by_item[("alice.md", "E08")]["flags"] and "duplicate" not in by_item[("alice.md", "B01")]["flags"]
    html_report = out.with_suffix(".html").read_text(encoding="utf-8")
    assert "<img alt=" in html_report and "data:image/png;base64," in html_report and "E08" in html_report


def test_a_second_run_in_the_same_folder_does_not_grade_its_own_output(sample_report):
    folder = sample_report["folder"]
    files = [p.name for p, _ in batch._expand([folder], folder / "other-stem")]
    assert not any(n.startswith("grades") for n in files)


def test_the_json_report_holds_every_parts_feedback(sample_report):
    report = json.loads(sample_report["out"].with_suffix(".json").read_text(encoding="utf-8"))
    assert report["format"] == "attn-grades" and report["options"]["cell_timeout"] == 5.0
    rows = {(Path(r["file"]).name, r["item"]): r for r in report["rows"]}
    e01 = rows[("junk.ipynb", "E01")]["detail"][0]
    assert "NameError" in e01["message"] and "undefined_scale" in e01["message"] and "line 3" in e01["message"]
    loop = rows[("loop.md", "E01")]
    assert "did not return within" in loop["detail"][0]["message"]
    assert any("time limit" in n["error"] for n in loop["notes"])
    assert rows[("loop.md", "E02")]["status"] == "correct"  # cells after the endless loop still ran
    assert "ZeroDivisionError" in rows[("crashing-cell.md", "E06")]["message"]
    assert "NameError" in rows[("junk.ipynb", "E07")]["message"]
    for r in report["rows"]:  # messages never show an expected array
        assert "[[" not in r["message"]


# ----------------------------------------------------------------------------- hostile hand-over data
def test_the_hand_over_is_read_as_data_never_as_objects():
    from attn.grading.runner import collect

    assert collect.parse('ATTNx{"values": {}}\n', "ATTNy") is None  # another nonce: ignored
    assert collect.parse("ATTNx{not json", "ATTNx") is None
    bad = collect.decode({"$": "array", "dtype": "|O", "shape": [1], "data": ["__import__('os')"]})
    assert isinstance(bad, collect.Opaque)
    assert isinstance(collect.decode({"$": "array", "dtype": "<f8", "shape": [2, 2], "data": [1, 2]}), collect.Opaque)
    arr = collect.decode({"$": "array", "dtype": "<f4", "shape": [2], "data": [0.5, float("nan")]})
    assert arr.dtype == np.float32 and arr[0] == 0.5 and np.isnan(arr[1])


def test_a_short_hand_over_never_passes_the_missing_tests():
    from attn.grading import get_item
    from attn.grading.runner import collect

    item = get_item("E01")
    cases = item.cases("softmax")
    first = collect.encode(np.asarray(attn.softmax(*cases[0])))  # the right output for the first case only
    data = {"values": {"softmax": {"$": "function", "name": "softmax", "stub": False}},
            "functions": {"softmax": [{"value": first}]}}
    verdict = collect.judge_items({"E01": None}, data)["E01"]["parts"][0]
    assert verdict["status"] == "not yet" and f"test 2 of {len(cases)}" in verdict["message"]


def test_a_variant_is_judged_against_the_seed_its_answers_follow_not_the_last_one_made():
    """Answers for ``v = variant("V01", 0)``, then ``variant("V01", 3)`` made to look at: right, for seed 0. Any
    seed is the learner's own choice; answers right for none of them stay wrong."""
    from attn.grading import get_item
    from attn.grading.runner import collect, grade

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (
        'v = variant("V01", seed)', "scores = ...", 'other = variant("V01", 3)  # another set, to look at',
        'v.check("scores")')])
    spec = batch.items_in(nb)
    assert spec == {"V01": 3}  # the literal: not the seed the answers follow

    def hand_over(answers, held):
        return {"values": {k: collect.encode(np.asarray(a)) for k, a in answers.items()}, "functions": {},
                "variants": [["V01", s] for s in held]}

    right0 = get_item("V01").expected(0)
    data = hand_over(right0, [0, 3])
    judged = grade._judge_best_seed(spec, grade._seed_candidates(spec, grade.seeds_in(nb), data), data)["V01"]
    assert judged["seed"] == 0 and [p["status"] for p in judged["parts"]] == ["correct"] * 3
    wrong = {k: np.asarray(a) + 1.0 for k, a in right0.items()}
    data = hand_over(wrong, [0, 3])
    judged = grade._judge_best_seed(spec, grade._seed_candidates(spec, grade.seeds_in(nb), data), data)["V01"]
    assert judged["seed"] == 0 and all(p["status"] == "not yet" for p in judged["parts"])  # the first made: v
    many = hand_over(right0, list(range(1, 1000)))  # thousands of variants cost no more than a few
    assert len(grade._seed_candidates(spec, {}, many)["V01"]) == grade.MAX_SEEDS


def test_names_a_reader_cannot_tell_apart_are_duplicates():
    from attn.grading.runner.rows import flag_duplicates

    names = ["bob", "Bob", "\uff42\uff4f\uff42", "bob\u200b", "\u202ebob", "alice", "ali ce"]
    rows = flag_duplicates([{"learner": n, "item": "B01", "file": f"{i}.md", "flags": ""} for i, n in enumerate(names)])
    assert [r["flags"] for r in rows] == ["duplicate"] * 5 + ["", ""]


def test_answers_too_large_to_hand_over_are_a_crash_that_says_so_not_a_silent_not_tried(monkeypatch):
    """Three 1000 x 1000 answers exceed the hand-over's cap: the kernel sends only ``{"error": ...}``. The row
    once read "not tried" with no message, as if the learner had answered nothing."""
    from attn.grading.runner import grade
    from attn.grading.runner.kernel import CellResult

    class TooMuch:  # a kernel whose last cell hands over the error the kernel side prints when over the cap
        def __init__(self, **kw): ...
        def start(self): ...
        def close(self): ...
        def execute(self, code, timeout, keep_stdout=False, keep_limit=0):
            nonce = re.search(r"ATTN[0-9a-f]{32}", code)
            out = nonce[0] + json.dumps({"error": "the answers are too large to hand over"}) if keep_stdout else ""
            return CellResult(status="ok", stdout="\n" + out + "\n")

    monkeypatch.setattr(grade, "Kernel", TooMuch)
    from attn.grading.runner import collect
    data, notes, crash = grade.run_cells(["scores = 1"], collect.request({"scores"}, {}), 5, 20, 5, False,
                                         grade.Limits())
    assert data is None and crash == "the answers could not be handed over (the answers are too large to hand over)"


def test_csv_cells_are_neutralised():
    from attn.grading.runner.rows import neutralise

    for s in ("=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx"):
        assert neutralise(s) == "'" + s
    assert neutralise("alice") == "alice" and neutralise(-1) == -1 and neutralise(0.5) == 0.5


def test_no_sandbox_means_a_refusal_unless_asked(tmp_path, monkeypatch, capsys):
    from attn.grading.runner import sandbox

    monkeypatch.setattr(sandbox, "_which", lambda name: None)
    assert batch.main([str(SUBMISSIONS / "empty.md"), "-o", str(tmp_path / "g"), "-q"]) == 3
    assert "--no-sandbox" in capsys.readouterr().err
    assert batch.main([str(SUBMISSIONS / "empty.md"), "-o", str(tmp_path / "g"), "-q", "--no-sandbox"]) == 0


# ----------------------------------------------------------------------------- resume, Dask
QUICK = ["rows/mallory.md", "rows/UPPER.MD", "limits/keyboard-interrupt.md", "rows/reads-expected.md"]


def _quick_class(tmp_path) -> Path:
    folder = tmp_path / "class"
    for f in QUICK:
        (folder / Path(f).name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SUBMISSIONS / f, folder / Path(f).name)
    return folder


def _cli(*args):
    return [sys.executable, "-m", "attn.grading.batch", *map(str, args), "--cell-timeout", "10", "-q"]


def _csv_rows(path: Path) -> list:
    return sorted(tuple((k, v) for k, v in r.items() if k != "file") for r in csv.DictReader(open(path, encoding="utf-8")))


@pytest.fixture(scope="module")
def resumed_run(tmp_path_factory):
    """A --jobs 1 run interrupted (SIGINT, as Ctrl-C) after its first file, then the same command again."""
    tmp = tmp_path_factory.mktemp("resume")
    folder = _quick_class(tmp)
    out = tmp / "grades"
    proc = subprocess.Popen(_cli(folder, "-o", out, "--jobs", "1"))
    journal = tmp / "grades.journal.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 1):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(120)
    first = journal.read_text().count("\n")
    rows_then = len(list(csv.DictReader(open(out.with_suffix(".csv"), encoding="utf-8"))))
    again = subprocess.run(_cli(folder, "-o", out, "--jobs", "1"), timeout=300).returncode
    return {"code": code, "first": first, "rows_then": rows_then, "again": again, "folder": folder, "out": out,
            "journal": journal}


def test_an_interrupted_run_resumes_where_it_stopped(resumed_run):
    r = resumed_run
    assert r["code"] == 130 and 1 <= r["first"] < len(QUICK)
    assert r["rows_then"] == r["first"]  # the rows of the files graded before Ctrl-C are in grades.csv
    assert r["again"] == 0
    assert r["journal"].read_text().count("\n") == len(QUICK)  # the first files were not graded again
    want = [dict(w) for w in csv.DictReader(open(EXPECTED, encoding="utf-8")) if w["file"] in QUICK]
    got = [{k: (str(Path(g["file"]).name) if k == "file" else g[k]) for k in COMPARED}
           for g in csv.DictReader(open(r["out"].with_suffix(".csv"), encoding="utf-8"))]
    key = lambda x: x["learner"]  # noqa: E731
    assert sorted(got, key=key) == sorted(({**w, "file": Path(w["file"]).name} for w in want), key=key)


def test_a_local_dask_cluster_gives_the_same_rows_as_one_job(resumed_run, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert subprocess.run(_cli(resumed_run["folder"], "-o", tmp_path / "dask", "--scheduler",
                                   cluster.scheduler_address), timeout=300).returncode == 0
    assert _csv_rows(tmp_path / "dask.csv") == _csv_rows(resumed_run["out"].with_suffix(".csv"))


def test_the_problem_and_variant_learner_copies_filled_in_are_graded(tmp_path):
    """B01-B05 and V01-V04 as a learner gets them, each answer filled in; a variant's seed is a variable (5 here),
    read back from the Variant object the notebook made: a wrong seed would give wrong answers."""
    folder = tmp_path / "class"
    folder.mkdir()
    want = {}
    for page in learner.pages(ROOT):
        if page.name[0] not in "bv":
            continue
        copy = learner.copy_path(page, ROOT)
        text = copy.read_text(encoding="utf-8")
        item = "V" + page.name[1:3] if page.name[0] == "v" else "B" + page.name[1:3]
        seed = "seed" if item[0] == "V" else ""
        text = re.sub(r"^seed = 0\b", "seed = 5", text, flags=re.M)
        expected = get_item(item).expected(5 if seed else None)  # typed in as numbers, as a learner would
        text = re.sub(r"^(\w+) = \.\.\.", lambda m: f"{m[1]} = np.array({np.asarray(expected[m[1]]).tolist()!r})",
                      text, flags=re.M)
        (folder / copy.name).write_text(text, encoding="utf-8")
        want[item] = ("correct", "", 5 if seed else None)
    assert len(want) == 9
    out = tmp_path / "grades"
    assert subprocess.run(_cli(folder, "-o", out, "--jobs", "2"), timeout=600).returncode == 0
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert {r["item"]: (r["status"], r["flags"], r["seed"]) for r in report["rows"]} == want


def test_flags_are_read_from_the_code():
    from attn.grading.runner.notebook import flags

    def nb(*cells):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])

    assert flags(nb("from attn import softmax as sm", "def softmax(x, tau=1.0):\n    return sm(x, tau)"),
                 {"softmax"}) == ["uses_attn_in:softmax"]
    assert flags(nb("def split_heads(X, h):\n    import attn as a\n    return a.split_heads(X, h)"),
                 {"split_heads"}) == ["uses_attn_in:split_heads"]
    assert flags(nb("import attn", "def helper(x):\n    return attn.softmax(x)",  # not a part: fine
                    "def softmax(x, tau=1.0):\n    return helper(x)"), {"softmax"}) == []
    assert flags(nb("import numpy as np\ndef softmax(x, tau=1.0):\n    e = np.exp(x)\n    return e / e.sum()"),
                 {"softmax"}) == []
    assert flags(nb("from attn.grading import get_item\nw = get_item('B01').expected()['weights']"), set()) == [
        "reads_expected"]
    assert flags(nb("ns = get_item('B01').context()"), set()) == ["reads_expected"]
    assert flags(nb('check("B01")  # the learner\'s own check is fine'), set()) == []
    # attn's own function handed in as the answer, without a def
    assert flags(nb("import attn\nsoftmax = attn.softmax"), {"softmax"}) == ["uses_attn_in:softmax"]
    assert flags(nb("from attn import attention as scaled_dot_product_attention"),
                 {"scaled_dot_product_attention"}) == ["uses_attn_in:scaled_dot_product_attention"]
    assert flags(nb("import attn as a\nsoftmax = lambda x, tau=1.0: a.softmax(x, tau)"), {"softmax"}) == [
        "uses_attn_in:softmax"]
    assert flags(nb("import attn\nmask = attn.causal_mask(4)", "def softmax(x, tau=1.0):\n    return x"),
                 {"softmax"}) == []


def _joined(pages, drop_tag: str = "") -> Path:
    """One notebook made of several pages (one kernel for all of them), without the cells tagged ``drop_tag``."""
    cells = []
    for p in pages:
        cells += [c for c in jupytext.read(p).cells if not drop_tag or drop_tag not in c.metadata.get("tags", [])]
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
    nbformat.write(_joined(pages, drop_tag="remove-cell"), path)  # the book's own bookkeeping is no learner's work
    rows = batch.grade_file(path, cell_timeout=60)
    assert {r["item"]: (r["status"], r["score"]) for r in rows} == {i: ("correct", 1.0) for i in EXERCISES}


def test_the_console_script_is_declared():
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["attn-grade"] == "attn.grading.batch:main"


def test_a_journal_from_another_version_of_the_grader_is_not_resumed(tmp_path, monkeypatch):
    # a teacher re-running the same command after updating attn (a fixed verdict) must get the new verdicts,
    # not the journal's old rows
    from attn.grading.runner import cli, rows

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a notebook")
    out = tmp_path / "grades"
    monkeypatch.setattr(rows, "grader_fingerprint", lambda: "version one")
    assert cli.main([str(folder), "-o", str(out), "-q", "--no-sandbox"]) == 0
    monkeypatch.setattr(rows, "grader_fingerprint", lambda: "version two")
    assert cli.main([str(folder), "-o", str(out), "-q", "--no-sandbox"]) == 0
    lines = [json.loads(line) for line in (tmp_path / "grades.journal.jsonl").read_text().splitlines()]
    assert [rec["options"]["grader"] for rec in lines] == ["version one", "version two"]  # graded again


def test_the_grader_fingerprint_follows_the_package_source():
    from attn.grading.runner import rows

    assert rows.grader_fingerprint() == rows.grader_fingerprint() and len(rows.grader_fingerprint()) == 64


def test_attns_own_function_passed_to_check_is_flagged():
    from attn.grading.runner.notebook import flags

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('import attn\ncheck("E01", softmax=attn.softmax)')])
    assert "uses_attn_in:softmax" in flags(nb, {"softmax"})


def test_a_notebook_too_large_to_read_is_for_review_and_never_run(tmp_path):
    """Reading code costs the grader's own time and memory, outside every sandbox limit (4 MB of code once took
    100 s and 2.2 GB): over 256 kB of code the notebook is not read further nor run; its rows say so."""
    from attn.grading.runner.grade import CODE_LIMIT

    cells = ["from attn.grading import check\nflops = 1\ncheck('E06')", "x = [" + "0, " * (CODE_LIMIT // 3) + "0]"]
    path = tmp_path / "huge.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    (row,) = batch.grade_file(path)
    assert (row["status"], row["flags"], row["score"]) == ("review", "code_too_large", "")
    assert "not run" in row["message"]


def test_a_notebook_of_many_failing_cells_keeps_its_reports_small(tmp_path):
    """Each failing cell becomes a note on the file's rows; a hundred of them once made a 17 MB report from a
    0.9 MB notebook. A row keeps the first 20 notes (each short) and says how many more there were."""
    cells = ["from attn.grading import check\ncheck('E06')"] + [f"v{i:03d}_{'x' * 200} = 1 / 0" for i in range(30)]
    path = tmp_path / "failing.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    (row,) = batch.grade_file(path, cell_timeout=10)
    assert len(row["notes"]) == 21 and row["notes"][-1]["error"] == "and 10 more cells failed"
    assert all(len(n["error"]) <= 300 for n in row["notes"]) and row["notes"][0]["error"].startswith("ZeroDivisionError")
