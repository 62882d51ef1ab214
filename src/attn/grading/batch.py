"""The teachers' grader: ``python -m attn.grading.batch`` and ``attn-grade`` (see :mod:`attn.grading.runner`).

    attn-grade SUBMISSION... [-o grades] [--jobs N] [--cell-timeout 30] [--items E01,E02] [--no-sandbox]

``SUBMISSION`` is a notebook (``.md`` MyST/jupytext or ``.ipynb``) or a folder
(every file in it, recursively). Each notebook runs in its own bubblewrap
sandbox (refused without one unless ``--no-sandbox``); the learner's kernel
only hands its values over and every verdict is computed in the grader's
process. Writes ``grades.csv``, ``grades.json`` and ``grades.html`` (``-o``
sets the stem), one row per learner and item, and ``grades.journal.jsonl``,
from which a rerun resumes.

Row fields (CSV and JSON): learner (the file's stem, or its folder with
``--learner-from parent``), claimed (the name in the notebook's
``attn: {learner: ...}`` metadata, if any), file, item, title, status
(``correct``, ``not yet``, ``not tried``, ``error``, or for the whole file
``not a notebook``, ``empty``, ``no items``, ``crashed``, ``skipped``),
parts_correct, parts_total, score, mistakes (recognised mistake keys), flags
(``claims_other_learner``, ``duplicate``, ``reads_expected``,
``uses_attn_in:NAME``, ``encoding``, ``suffix``), parts, message. The JSON rows
also hold each part's feedback (``detail``), the variant's seed and the notes on
cells that failed.
"""
from __future__ import annotations

from pathlib import Path

from .runner.cli import expand as _expand
from .runner.cli import main
from .runner.grade import grade_file
from .runner.notebook import NotNotebook, items_in, learner_of, strip_grader_calls
from .runner.notebook import read_notebook as _read_notebook
from .runner.rows import FIELDS, make_row


def read_notebook(path: Path):
    """The notebook at ``path`` (nbformat NotebookNode), or raise :class:`NotNotebook`."""
    return _read_notebook(Path(path))[0]


def expand(paths) -> list[Path]:
    return [p for p, _ in _expand(paths)]


def write_reports(rows: list, stem: Path, options: dict) -> tuple[Path, Path]:
    """Write ``STEM.csv`` (spreadsheet-safe) and ``STEM.json``; returns both paths."""
    from .runner.rows import flag_duplicates, write_csv, write_json

    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    rows = flag_duplicates(rows)
    csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
    write_csv(rows, csv_path)
    write_json(rows, json_path, options)
    return csv_path, json_path


__all__ = ["FIELDS", "NotNotebook", "expand", "grade_file", "items_in", "learner_of", "main", "make_row",
           "read_notebook", "strip_grader_calls", "write_reports"]

if __name__ == "__main__":
    raise SystemExit(main())
