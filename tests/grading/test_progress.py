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

from attn.grading import CORRECT, NOT_TRIED, NOT_YET, Note, Table, check, items, progress, record_progress
from attn.grading import progress_file as pf

ROOT = Path(__file__).resolve().parents[2]


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


# ----------------------------------------------------------------------------- progress is never lost
STRESS = textwrap.dedent("""
    import sys
    from attn.grading import check, get_item, record_progress
    record_progress(folder=sys.argv[1])
    right = get_item("B01").expected()["scores"]
    for i in range(int(sys.argv[2])):
        check("B01", scores=right if i % 2 else right + 1)   # both processes: the same part
        check(sys.argv[3], cold_limit=[1, 0, 0]) if sys.argv[3] == "B02" else check(sys.argv[3], var_raw=64.0)
    print("done")
""")


def test_two_kernels_checking_in_one_folder_keep_every_attempt(tmp_path):
    n = 60
    env = {**os.environ, "ATTN_PROGRESS": "on"}
    procs = [subprocess.Popen([sys.executable, "-c", STRESS, str(tmp_path), str(n), other], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for other in ("B02", "B05")]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 and "done" in o for p, (o, e) in zip(procs, outs)), outs
    data = json.loads((tmp_path / pf.FILENAME).read_text())
    parts = data["items"]
    assert parts["B01"]["parts"]["scores"]["attempts"] == 2 * n, outs
    assert parts["B01"]["parts"]["scores"]["status"] == CORRECT
    assert parts["B02"]["parts"]["cold_limit"]["attempts"] == n, outs
    assert parts["B05"]["parts"]["var_raw"]["attempts"] == n
    assert not list(tmp_path.glob(".tmp-*"))


def test_a_killed_writes_temporary_file_is_cleaned_up_by_the_next_write(tmp_path):
    record_progress(folder=tmp_path)
    (tmp_path / (".tmp-abc123" + pf.FILENAME)).write_text('{"format": "attn-prog')
    check("B01", scores=_right("scores"))
    assert not list(tmp_path.glob(".tmp-*"))
    assert _status(progress(), "B01") == NOT_YET


def test_a_read_only_folder_is_told_once(tmp_path, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes to read-only folders")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        record_progress(folder=ro)
        for _ in range(3):
            assert check("B01", scores=_right("scores")).correct
        out = capsys.readouterr().out
        assert out.count("Progress not saved") == 1, out
    finally:
        ro.chmod(0o755)


def test_an_unwritable_destination_is_told_once(tmp_path, capsys):
    """(Works as root too: the destination is a folder, so os.replace fails every time.)"""
    (tmp_path / pf.FILENAME).mkdir()
    record_progress(folder=tmp_path)
    for _ in range(3):
        assert check("B01", scores=_right("scores")).correct
    out = capsys.readouterr().out
    assert out.count("Progress not saved") == 1, out


def test_in_a_notebook_a_problem_is_displayed_not_printed_with_backticks(tmp_path, capsys, monkeypatch):
    """A printed note showed `record_progress()` with raw backticks in the notebook; displayed, its HTML has <code>."""
    import types

    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=object()))
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    note = pf._tell_once(("test", str(tmp_path)), Note("Progress not saved", "Run the `record_progress()` cell."))
    assert shown == [note] and capsys.readouterr().out == ""
    assert "<code>record_progress()</code>" in note._repr_html_()


def test_a_deeply_nested_file_is_set_aside_never_raised(tmp_path, capsys):
    path = tmp_path / pf.FILENAME
    path.write_text("[" * 100_000 + "]" * 100_000)
    record_progress(folder=tmp_path)
    table = progress()
    assert "damaged" in table.footer and "nested" in table.footer
    assert check("B01", scores=_right("scores")).correct
    assert json.loads(path.read_text())["items"]["B01"]["parts"]["scores"]["attempts"] == 1
    assert len(list(tmp_path.glob(".damaged-*"))) == 1


def test_after_a_restart_without_record_progress_the_note_says_to_run_that_cell(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    record_progress(folder=tmp_path)
    check("B01", scores=_right("scores"))
    record_progress(False)  # what a restart does: the kernel forgets
    for _ in range(2):
        check("B01", weights=_right("weights"))
    out = capsys.readouterr().out
    assert out.count("record_progress()") == 1, out
    assert "record_progress()" in progress().footer


def test_progress_of_a_missing_folder_says_so(tmp_path):
    note = progress(tmp_path / "missing")
    assert "does not exist" in str(note) and not note
    assert "does not exist" in str(progress("missing/"))


def test_the_progress_store_does_not_import_the_registry():
    src = (ROOT / "src" / "attn" / "grading" / "progress_file.py").read_text(encoding="utf-8")
    assert "from .items" not in src and "import items" not in src and "learner_api" not in src


def test_progress_of_a_folder_that_is_not_a_path_is_a_note_not_an_exception():
    for junk in (123, b"/tmp", 1.5, ["a"], object()):
        note = progress(junk)
        assert isinstance(note, Note) and not note, junk
        assert "folder" in str(note)


def test_record_progress_into_a_folder_that_is_not_a_path_is_a_note_not_an_exception(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for junk in (123, b"/tmp", 1.5):
        note = record_progress(folder=junk)
        assert isinstance(note, Note) and "folder" in str(note), junk
    record_progress(False)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_named_pipe_or_a_device_in_place_of_the_file_is_set_aside_with_a_note_never_a_hang(tmp_path, kind):
    # a named pipe made check() and progress() wait forever for a writer; a device is no progress file either
    import threading

    path = tmp_path / pf.FILENAME
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/null")  # (a device: /dev/zero would never end)
    record_progress(folder=tmp_path)
    done = {}

    def learner():
        done["table"] = progress()
        done["fb"] = check("B01", scores=_right("scores"))

    worker = threading.Thread(target=learner, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), f"check()/progress() hung on a {kind} in place of the progress file"
    assert "damaged" in done["table"].footer and "not a regular file" in done["table"].footer
    assert done["fb"].correct
    assert path.is_file() and not path.is_symlink()  # a fresh file in its place, the check saved in it
    assert json.loads(path.read_text())["items"]["B01"]["parts"]["scores"]["status"] == CORRECT
    assert len(list(tmp_path.glob(".damaged-*"))) == 1


def test_an_item_id_with_a_trailing_newline_is_not_a_valid_item():
    # a pattern's $ matches before a final newline: "B01\n" once passed the schema
    data = {"format": pf.FORMAT, "version": pf.VERSION, "items": {"B01\n": {"parts": {}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, pf.SCHEMA)
    jsonschema.validate({**data, "items": {"B01": {"parts": {}}}}, pf.SCHEMA)
