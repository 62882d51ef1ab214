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
  leaves the previous file intact.
- A part's saved status is the best reached so far ("correct" stays correct).
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from .feedback import CORRECT, NOT_TRIED, NOT_YET, Note, Table

FILENAME = ".attn-progress.json"
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
            "propertyNames": {"pattern": "^[A-Z][0-9]{2}$"},
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
    if not on or _disabled_by_env():
        _state["path"] = None
        why = " (ATTN_PROGRESS=off is set)" if on else ""
        return Note("Progress", f"not saved in this session{why}.")
    path = Path(folder if folder is not None else os.getcwd()).resolve() / FILENAME
    _state["path"] = path
    return Note("Progress", f"your checks are saved to {path.name} in this folder; progress() shows the table.")


def recording_path() -> Path | None:
    return _state["path"]


def load(path: str | os.PathLike) -> tuple[dict, Note | None]:
    """Read and validate a progress file: ``(data, None)``, or a fresh ``(data, note)`` after setting a damaged file aside."""
    import jsonschema

    path = Path(path)
    if not path.exists():
        return _empty(), None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.validate(data, SCHEMA)
        return data, None
    except (ValueError, jsonschema.ValidationError, UnicodeDecodeError) as exc:
        aside = path.with_name(f".damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}{FILENAME}")
        try:
            os.replace(path, aside)
            where = f"It was renamed to {aside.name}"
        except OSError as err:
            where = f"It could not be renamed ({err})"
        reason = exc.message if isinstance(exc, jsonschema.ValidationError) else type(exc).__name__
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


def record(feedbacks) -> Note | None:
    """Called by ``check``: save the verdicts if recording is on. Never raises; a problem is reported once."""
    path = _state["path"]
    if path is None or _disabled_by_env():
        return None
    feedbacks = [f for f in feedbacks if getattr(f, "status", NOT_TRIED) != NOT_TRIED]
    if not feedbacks:
        return None
    try:
        data, note = load(path)
        save(path, update(data, feedbacks))
    except Exception as exc:  # a read-only folder, a full disk: the check itself still answers
        note = Note("Progress not saved", f"{path}: {type(exc).__name__}: {exc}")
    if note is not None and str(note) not in _reported:
        _reported.add(str(note))
        print(note)
    return note


def item_status(data: dict, item) -> str:
    parts = data["items"].get(item.id, {}).get("parts", {})
    if not parts:
        return NOT_TRIED
    if all(parts.get(p, {}).get("status") == CORRECT for p in item.part_names):
        return CORRECT
    return NOT_YET


def _names_an_item(text) -> bool:
    from .items import items

    name = str(text).upper().removeprefix("II.3.")
    return any(it.id == name for it in items())


def progress(folder: str | os.PathLike | None = None) -> Table:
    """A table of every item (not tried / not yet / correct) from the saved progress file.

    ``folder`` defaults to the file being recorded to, else the working directory.
    """
    from .items import items

    if folder is not None and not Path(folder).is_dir() and _names_an_item(folder):
        folder = None  # progress("B01"): the learner wants the table, which lists B01 among the rest
    if folder is not None:
        path = Path(folder) / FILENAME
    else:
        path = _state["path"] or Path(os.getcwd()) / FILENAME
    data, note = load(path)
    rows = []
    for it in items():
        parts = data["items"].get(it.id, {}).get("parts", {})
        done = sum(parts.get(p, {}).get("status") == CORRECT for p in it.part_names)
        rows.append([f"II.3.{it.id}", it.title, item_status(data, it), f"{done}/{len(it.parts)}"])
    n_ok = sum(r[2] == CORRECT for r in rows)
    footer = f"{n_ok} of {len(rows)} items correct."
    if note is not None:
        footer += f" {note}"
    if _state["path"] is None:
        footer += " (Progress is saved only in your own copies under exercises/learner/.)"
    return Table("Your progress", ["item", "title", "status", "parts correct"], rows, footer)
