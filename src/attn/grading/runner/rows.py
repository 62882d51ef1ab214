"""Rows of the class's grades: one per learner and item; CSV made safe for spreadsheets; a journal to resume from.

CSV cells that begin with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return get a leading apostrophe (OWASP's CSV-injection rule), so a
spreadsheet shows them as text instead of running them as formulas.
"""
from __future__ import annotations

import csv
import json
import os
import time
from collections import Counter
from pathlib import Path

from .notebook import name_key

FIELDS = ["learner", "claimed", "file", "item", "title", "status", "parts_correct", "parts_total", "score",
          "mistakes", "flags", "parts", "message"]
_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """A CSV cell a spreadsheet will not execute (OWASP CSV injection): numbers pass, text gets ``'`` if needed."""
    if isinstance(value, str) and value.startswith(_DANGEROUS):
        return "'" + value
    return value


def _item_status(parts) -> str:
    statuses = {p["status"] for p in parts}
    if statuses == {"correct"}:
        return "correct"
    if statuses <= {"not tried"}:
        return "not tried"
    if "error" in statuses:
        return "error"
    return "not yet"


def writable(value):
    """``value`` with every text made encodable: a lone surrogate (from a learner's error message, a notebook's
    metadata, or a file name that is not UTF-8) becomes its escape, ``\\udce9``, so no writer can fail on it."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {writable(k): writable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [writable(v) for v in value]
    return value


def make_row(learner, file, item="", title="", status="", message="", parts=None, flags=(), notes=(), claimed="",
             seed=None) -> dict:
    parts = parts or []
    n_ok = sum(p["status"] == "correct" for p in parts)
    return writable({
        "learner": learner, "claimed": claimed, "file": file, "item": item, "title": title,
        "status": status or (_item_status(parts) if parts else ""),
        "parts_correct": n_ok if parts else "", "parts_total": len(parts) if parts else "",
        "score": round(n_ok / len(parts), 4) if parts else "",
        "mistakes": " ".join(sorted({p["mistake"] for p in parts if p.get("mistake") and p["status"] != "correct"})),
        "flags": " ".join(sorted(set(flags))), "parts": "; ".join(f"{p['part']}={p['status']}" for p in parts),
        "message": message, "seed": seed, "detail": parts, "notes": list(notes),
    })


def flag_duplicates(rows: list) -> list:
    """Flag rows whose learner and item appear in more than one file."""
    files = {}
    for r in rows:
        if r.get("item"):
            files.setdefault((name_key(r["learner"]), r["item"]), set()).add(r["file"])
    for r in rows:
        if r.get("item") and len(files[(name_key(r["learner"]), r["item"])]) > 1:
            r["flags"] = " ".join(sorted(set(r["flags"].split()) | {"duplicate"}))
    return rows


def write_csv(rows: list, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8", errors="backslashreplace") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore", quoting=csv.QUOTE_MINIMAL)
        w.writeheader()
        for r in rows:
            w.writerow({k: neutralise(r.get(k, "")) for k in FIELDS})
    os.replace(tmp, path)


def write_json(rows: list, path: Path, options: dict) -> None:
    report = {"format": "attn-grades", "version": 2, "generated": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "options": options, "rows": rows}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8",
                   errors="backslashreplace")
    os.replace(tmp, path)


def grader_fingerprint() -> str:
    """A digest of the attn package's Python source (the items, their checkers, this grader): a journal written
    by another version is not resumed, so a fixed verdict reaches the rows of a re-run."""
    import hashlib

    root = Path(__file__).resolve().parents[2]  # src/attn
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Journal:
    """Rows appended as each file finishes (JSON lines, flushed); a rerun skips the files already there.

    A file is keyed by its path and content hash, so an edited submission is graded again.
    """

    def __init__(self, path: Path, options: dict):
        self.path, self.options = path, options
        self.done: dict[str, list] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a line cut short by an interrupted run
                if isinstance(rec, dict) and rec.get("options") == options and "key" in rec:
                    self.done[rec["key"]] = writable(rec["rows"])
        self._fh = open(path, "a", encoding="utf-8")

    def add(self, key: str, rows: list) -> None:
        self.done[key] = rows
        self._fh.write(json.dumps({"key": key, "options": self.options, "rows": rows}, default=str) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def summary(rows: list) -> Counter:
    return Counter(r["status"] for r in rows)
