"""The learner's progress: a small JSON file in the learner's own folder.

- Recording is OFF by default, so building the book or running the book's pages
  never writes anything. The learner copies (``exercises/learner/*.md``) call
  :func:`record_progress` in their first cell, which turns it on for that kernel
  and saves to ``.attn-progress.json`` in the notebook's folder (the kernel's
  working directory). ``ATTN_PROGRESS=off`` in the environment keeps it off
  whatever the notebook says (for graders and tests).
- The file is validated against :data:`SCHEMA` (jsonschema); a file that is not
  valid JSON or fails the schema is reported, renamed to
  ``.damaged-<time>.attn-progress.json`` and replaced by a fresh one: never a crash.
- Every write goes to a temporary file in the same folder, is flushed and
  fsync'ed, then ``os.replace``'d over the old file: a write killed half-way
  leaves the previous file intact, and its ``.tmp-*`` file is removed by the
  next write.
- Read, update and write happen under a file lock (:mod:`filelock`, the file
  ``.lock-.attn-progress.json``), so two kernels checking in one folder at
  once merge their records: every attempt of both is kept.
- A part's saved status is the best reached so far ("correct" stays correct).
- This module is the store only: it never imports the registry of items
  (``table`` is given the items; :func:`attn.grading.progress` passes them).
- Problems are told once per kernel, never raised: a folder that cannot be
  written, a damaged file (set aside), a file in the working folder while
  recording is off (a kernel restarted without running ``record_progress()``).
"""
from __future__ import annotations

import atexit
import json
import os
import tempfile
import time
from pathlib import Path

from .feedback import CORRECT, NOT_TRIED, NOT_YET, Note, Table

FILENAME = ".attn-progress.json"
LOCKNAME = ".lock-" + FILENAME
LOCK_SECONDS = 10.0
FORMAT = "attn-progress"
VERSION = 1

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["format", "version", "items"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "items": {
            "type": "object",
            "propertyNames": {"pattern": "^[A-Z][0-9]{2}$", "maxLength": 3},  # ($ alone lets "B01\n" through)
            "additionalProperties": {
                "type": "object",
                "required": ["parts"],
                "additionalProperties": False,
                "properties": {
                    "parts": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "required": ["status", "attempts", "updated"],
                            "additionalProperties": False,
                            "properties": {
                                "status": {"enum": [NOT_YET, CORRECT]},
                                "attempts": {"type": "integer", "minimum": 1},
                                "updated": {"type": "string"},
                            },
                        },
                    }
                },
            },
        },
    },
}

_state = {"path": None}  # the file being recorded to, or None (off)
_reported: set[str] = set()  # damaged/unwritable files already reported in this kernel


def _empty() -> dict:
    return {"format": FORMAT, "version": VERSION, "items": {}}


def _disabled_by_env() -> bool:
    return os.environ.get("ATTN_PROGRESS", "").lower() in ("off", "0", "no", "false")


def record_progress(on: bool = True, folder: str | os.PathLike | None = None) -> Note:
    """Turn saving on (or off). Saves to ``folder/.attn-progress.json``; ``folder`` defaults to the working directory."""
    if _pending and _state["path"] is not None:
        try:
            _write(_state["path"], LOCK_SECONDS)  # verdicts still waiting for the previous file
        except Exception:
            pass
    _pending.clear()
    if folder is not None and not isinstance(folder, (str, os.PathLike)):
        return not_a_folder("record_progress", folder)
    if not on or _disabled_by_env():
        _state["path"] = None
        why = " (ATTN_PROGRESS=off is set)" if on else ""
        return Note("Progress", f"not saved in this session{why}.")
    path = Path(folder if folder is not None else os.getcwd()).resolve() / FILENAME
    _state["path"] = path
    return Note("Progress", f"your checks are saved to {path.name} in this folder; progress() shows the table.")


def not_a_folder(function: str, folder) -> Note:
    """The note for a ``folder`` argument that is not a path (a number, bytes, a list): never an exception."""
    text = repr(folder)
    return Note("Which folder?", f"{function}() takes a folder's path as text, such as \".\" or \"exercises\", not "
                f"{text if len(text) <= 40 else text[:37] + '...'}; with no argument it uses this notebook's folder.")


def recording_path() -> Path | None:
    return _state["path"]


class NotRegular(Exception):
    """The progress file is a named pipe, a device or a socket: reading it could block forever or never end."""


def _read_regular(path: Path) -> str:
    """The text of ``path`` if it is a regular file (a link to one is followed). Opened without blocking and
    checked on the open file itself, so a named pipe put in its place, even between two checks, never hangs a check."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))  # as before: unreadable, not set aside
        if not stat.S_ISREG(mode):
            raise NotRegular("it is not a regular file but a named pipe, a device or a socket")
        with os.fdopen(fd, "rb") as fh:
            fd = None
            return fh.read().decode("utf-8")
    finally:
        if fd is not None:
            os.close(fd)


def load(path: str | os.PathLike) -> tuple[dict, Note | None]:
    """Read and validate a progress file: ``(data, None)``, or a fresh ``(data, note)`` after setting a damaged file aside."""
    import jsonschema

    path = Path(path)
    if not path.exists():
        return _empty(), None
    try:
        data = json.loads(_read_regular(path))
        jsonschema.validate(data, SCHEMA)
        return data, None
    except (ValueError, jsonschema.ValidationError, UnicodeDecodeError, RecursionError, NotRegular) as exc:
        aside = path.with_name(f".damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}{FILENAME}")
        try:
            os.replace(path, aside)
            where = f"It was renamed to {aside.name}"
        except OSError as err:
            where = f"It could not be renamed ({err})"
        reason = (exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc) if isinstance(exc, NotRegular)
                  else "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__)
        return _empty(), Note("Progress file damaged",
                              f"{path.name} could not be read ({reason}). {where}; a fresh one starts now.")
    except OSError as exc:
        return _empty(), Note("Progress file unreadable", f"{path}: {exc}. Progress is not shown from it.")


def save(path: str | os.PathLike, data: dict) -> None:
    """Validate, then write atomically: temp file in the same folder, fsync, os.replace."""
    import jsonschema

    jsonschema.validate(data, SCHEMA)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=FILENAME)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def update(data: dict, feedbacks) -> dict:
    """Fold checks into ``data`` (in place); "not tried" checks are not recorded."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    for fb in feedbacks:
        if fb.status == NOT_TRIED:
            continue
        parts = data["items"].setdefault(fb.item, {"parts": {}})["parts"]
        old = parts.get(fb.part)
        best = CORRECT if fb.status == CORRECT or (old and old["status"] == CORRECT) else NOT_YET
        parts[fb.part] = {"status": best, "attempts": (old["attempts"] if old else 0) + 1, "updated": now}
    return data


def _clean_temporaries(folder: Path) -> None:
    """Remove the temporary files of writes that were killed half-way (called under the lock: none is live)."""
    for tmp in folder.glob(".tmp-*" + FILENAME):
        try:
            tmp.unlink()
        except OSError:
            pass


def _tell_once(key, note: Note) -> Note:
    if key not in _reported:
        _reported.add(key)
        _show(note)
    return note


def _show(note: Note) -> None:
    """In a notebook kernel, display the note (its HTML shows `code` as code, not as backticks); else print it."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from IPython.display import display

        display(note)
    else:
        print(note)


def _restart_note() -> Note | None:
    """Recording is off but a progress file sits in the working folder: a kernel restarted without record_progress()."""
    if _disabled_by_env() or not (Path(os.getcwd()) / FILENAME).exists():
        return None
    return Note("Progress not saved", f"there is a {FILENAME} in this folder, but saving is off in this kernel "
                "(a restart turns it off). Run the `record_progress()` cell at the top of the notebook.")


_pending: list = []  # verdicts not yet written (the file was locked too long): written with the next check


def _flush_at_exit() -> None:
    if _pending and _state["path"] is not None:
        _write(_state["path"], timeout=4 * LOCK_SECONDS)


def _write(path: Path, timeout: float) -> Note | None:
    """Fold every pending verdict into the file under the lock; raises filelock.Timeout if it stays locked."""
    from filelock import FileLock

    if not path.parent.is_dir():
        raise FileNotFoundError(f"the folder {path.parent} does not exist")
    with FileLock(str(path.with_name(LOCKNAME)), timeout=timeout, poll_interval=0.01):
        _clean_temporaries(path.parent)
        data, note = load(path)
        save(path, update(data, _pending))
        _pending.clear()
    return note


def record(feedbacks) -> Note | None:
    """Called by ``check``: save the verdicts if recording is on. Never raises; a problem is reported once.

    If another kernel holds the file longer than ``LOCK_SECONDS``, the verdicts wait in memory and are written
    with the next check (or when the kernel exits): nothing is lost.
    """
    from filelock import Timeout

    feedbacks = [f for f in feedbacks if getattr(f, "status", NOT_TRIED) != NOT_TRIED]
    path = _state["path"]
    if path is None or _disabled_by_env():
        note = _restart_note() if feedbacks and path is None else None
        return _tell_once(("restart", os.getcwd()), note) if note is not None else None
    if not feedbacks and not _pending:
        return None
    if not _state.get("atexit"):
        atexit.register(_flush_at_exit)
        _state["atexit"] = True
    _pending.extend(feedbacks)
    try:
        note = _write(path, LOCK_SECONDS)
    except Timeout:
        return _tell_once(("lock", str(path)), Note(
            "Progress not saved yet", f"{path.name} is busy (another notebook is saving to it); your checks are "
            "kept and saved with your next check."))
    except Exception as exc:  # a read-only folder, a full disk: the check itself still answers
        _pending.clear()
        what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return _tell_once(("unwritable", str(path), type(exc).__name__), Note(
            "Progress not saved", f"{path.parent}: {type(exc).__name__}: {what}. Your checks still answer; "
            "this is said once."))
    if note is not None:
        _tell_once(str(note), note)
    return note


def item_status(data: dict, item) -> str:
    parts = data["items"].get(item.id, {}).get("parts", {})
    if not parts:
        return NOT_TRIED
    if all(parts.get(p, {}).get("status") == CORRECT for p in item.part_names):
        return CORRECT
    return NOT_YET


def table(items, folder: str | os.PathLike | None = None) -> Table | Note:
    """A table of ``items`` (not tried / not yet / correct) from the saved progress file in ``folder``.

    ``folder`` defaults to the file being recorded to, else the working directory. The items are passed in
    (``attn.grading.progress`` passes every registered item): this module does not import the registry.
    """
    if folder is not None and not Path(folder).is_dir():
        return Note("No such folder", f"The folder {str(folder)!r} does not exist, so it holds no progress. "
                    "progress() with no argument reads the file next to this notebook.")
    if folder is not None:
        path = Path(folder) / FILENAME
    else:
        path = _state["path"] or Path(os.getcwd()) / FILENAME
    data, note = load(path)
    rows = []
    for it in items:
        parts = data["items"].get(it.id, {}).get("parts", {})
        done = sum(parts.get(p, {}).get("status") == CORRECT for p in it.part_names)
        rows.append([it.full_id, it.title, item_status(data, it), f"{done}/{len(it.parts)}"])
    n_ok = sum(r[2] == CORRECT for r in rows)
    footer = f"{n_ok} of {len(rows)} items correct."
    if note is not None:
        footer += f" {note}"
    if _state["path"] is None:
        restart = _restart_note()
        footer += (f" {restart.text[0].upper()}{restart.text[1:]}" if restart is not None and folder is None else
                   " (Progress is saved only in your own copies under exercises/learner/.)")
    return Table("Your progress", ["item", "title", "status", "parts correct"], rows, footer)
