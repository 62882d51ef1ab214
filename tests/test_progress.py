"""progress(): a small JSON file in the learner's folder, schema-checked, written atomically, never a crash."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import jupytext
import nbclient
import numpy as np
import pytest

from attn.grading import CORRECT, NOT_TRIED, NOT_YET, Table, check, items, progress, record_progress
from attn.grading import progress_file as pf

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _recording_off_after(monkeypatch):
    monkeypatch.delenv("ATTN_PROGRESS", raising=False)
    yield
    record_progress(False)


def _right(part):
    from attn.grading import get_item
    return get_item("B01").expected()[part]


def _status(table: Table, item_id: str) -> str:
    return next(r[2] for r in table.rows if r[0] == f"II.3.{item_id}")


def test_recording_is_off_by_default_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert pf.recording_path() is None
    check("B01", scores=_right("scores"))
    table = progress()
    assert list(tmp_path.iterdir()) == []
    assert {r[2] for r in table.rows} == {NOT_TRIED}
    assert len(table.rows) == len(items())


def test_checks_are_saved_validated_and_shown(tmp_path):
    record_progress(folder=tmp_path)
    check("B01", scores=_right("scores"))
    check("B01", weights=np.zeros((3, 3)))
    check("B01", output=...)  # not tried: not recorded
    data = json.loads((tmp_path / pf.FILENAME).read_text())
    jsonschema.validate(data, pf.SCHEMA)
    parts = data["items"]["B01"]["parts"]
    assert parts["scores"]["status"] == CORRECT and parts["weights"]["status"] == NOT_YET
    assert "output" not in parts
    table = progress()
    assert _status(table, "B01") == NOT_YET and _status(table, "B02") == NOT_TRIED
    assert "B01" in str(table) and "<table>" in table._repr_html_()
    check("B01", weights=_right("weights"), output=_right("output"))
    assert _status(progress(), "B01") == CORRECT
    check("B01", scores=np.zeros((3, 3)))  # a later slip does not take back a correct part
    data = json.loads((tmp_path / pf.FILENAME).read_text())
    assert data["items"]["B01"]["parts"]["scores"] == {**data["items"]["B01"]["parts"]["scores"], "status": CORRECT}
    assert data["items"]["B01"]["parts"]["scores"]["attempts"] == 2


def test_variants_are_recorded_under_their_id(tmp_path):
    from attn.grading import get_item
    record_progress(folder=tmp_path)
    exp = get_item("V03").expected(4)
    check("V03", seed=4, **exp)
    assert _status(progress(), "V03") == CORRECT


@pytest.mark.parametrize("content", [
    "{not json", "", "[]", '{"format": "attn-progress", "version": 1, "items": {"B01": {"parts": '
    '{"scores": {"status": "maybe", "attempts": 1, "updated": "x"}}}}}', "\x00\x01\x02",
])
def test_a_damaged_file_is_reported_and_set_aside(tmp_path, capsys, content):
    path = tmp_path / pf.FILENAME
    path.write_text(content, encoding="utf-8")
    record_progress(folder=tmp_path)
    table = progress()
    assert "damaged" in table.footer and {r[2] for r in table.rows} == {NOT_TRIED}
    aside = list(tmp_path.glob(".damaged-*" + pf.FILENAME))
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == content
    fb = check("B01", scores=_right("scores"))  # the check still answers, and a fresh file starts
    assert fb.correct
    jsonschema.validate(json.loads(path.read_text()), pf.SCHEMA)


def test_a_folder_that_cannot_be_written_is_reported_not_raised(tmp_path):
    record_progress(folder=tmp_path / "missing" / "folder")
    fb = check("B01", scores=_right("scores"))
    assert fb.correct


def test_env_switch_keeps_recording_off(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_PROGRESS", "off")
    note = record_progress(folder=tmp_path)
    assert "not saved" in str(note)
    check("B01", scores=_right("scores"))
    assert not (tmp_path / pf.FILENAME).exists()


KILLERS = {
    # killed after the temporary file is complete, before os.replace
    "before_replace": "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)",
    # killed half-way through writing the temporary file
    "mid_write": textwrap.dedent("""
        real_dump = json.dump
        def dump(obj, fh, **kw):
            fh.write(json.dumps(obj)[:40]); fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        json.dump = dump
    """),
}


@pytest.mark.parametrize("killer", KILLERS, ids=list(KILLERS))
def test_a_killed_write_leaves_the_previous_file_intact(tmp_path, killer):
    record_progress(folder=tmp_path)
    check("B02", cold_limit=[1, 0, 0])
    path = tmp_path / pf.FILENAME
    before = path.read_text()
    script = textwrap.dedent(f"""
        import json, os, signal, sys
        from attn.grading import get_item, record_progress
        from attn.grading import progress_file as pf
        record_progress(folder=sys.argv[1])
        fb = get_item("B01").judge("scores", get_item("B01").expected()["scores"])
    """) + KILLERS[killer] + "\npf.record([fb])\nprint('not killed')\n"
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True)
    assert run.returncode == -9, run.stdout + run.stderr
    assert path.read_text() == before  # the old file, whole
    data, note = pf.load(path)
    assert note is None and data["items"]["B02"]["parts"]["cold_limit"]["status"] == CORRECT
    assert "B01" not in data["items"]
    check("B01", scores=_right("scores"))  # and the next write works
    assert _status(progress(), "B01") == NOT_YET  # one part of three correct
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != pf.FILENAME]
    assert all(n.endswith(pf.FILENAME) for n in leftovers)  # a leftover temp file is git-ignored


def _run_notebook(text: str, folder: Path) -> None:
    nb = jupytext.reads(text, fmt="md:myst")
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()


def test_the_book_page_never_writes_but_the_learner_copy_does(tmp_path):
    book = (ROOT / "exercises" / "b01-three-tokens.md").read_text(encoding="utf-8")
    learner = (ROOT / "exercises" / "learner" / "b01-three-tokens.md").read_text(encoding="utf-8")
    right = np.round(_right("scores"), 2).tolist()
    book_dir, learner_dir = tmp_path / "book", tmp_path / "learner"
    book_dir.mkdir()
    learner_dir.mkdir()
    _run_notebook(book.replace("scores = ...", f"scores = {right}"), book_dir)
    assert not (book_dir / pf.FILENAME).exists()
    _run_notebook(learner.replace("scores = ...", f"scores = {right}"), learner_dir)
    data = json.loads((learner_dir / pf.FILENAME).read_text())
    assert data["items"]["B01"]["parts"] == {"scores": data["items"]["B01"]["parts"]["scores"]}
    assert data["items"]["B01"]["parts"]["scores"]["status"] == CORRECT
