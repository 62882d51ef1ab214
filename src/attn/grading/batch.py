"""The teachers' grader: run learners' notebooks in fresh kernels and grade every item they hold.

    python -m attn.grading.batch SUBMISSION... [-o grades] [--cell-timeout 30] [--items E01,E02]
    attn-grade SUBMISSION ...                  # the same, as a console script

``SUBMISSION`` is a notebook (``.md`` MyST/jupytext or ``.ipynb``) or a folder
(every file in it, recursively, hidden files excepted). Writes ``grades.csv``
and ``grades.json`` (``-o`` sets the stem): one row per learner and item.

How a notebook is graded
------------------------
1. It is read (jupytext for ``.md``, nbformat for ``.ipynb``). A file that is
   not a notebook, or is empty, gets one row saying so.
2. The items it holds are those named in its ``check("E01", ...)``,
   ``hint(...)`` and ``variant("V01", 7)`` calls (``--items`` overrides);
   a variant's seed is read from ``variant(..., seed)`` or ``seed=...``.
3. The learner's own ``check``, ``hint``, ``progress``, ``record_progress``
   and ``variant(...).check`` statements are removed (the notebook never grades
   itself), and the rest runs top to bottom in a fresh kernel (working folder:
   a new temporary one; ``ATTN_PROGRESS=off``) with a time limit per cell; a
   cell that raises or runs past the limit is noted and the next cell runs.
4. A last cell, added by the grader, reloads :mod:`attn` (so nothing the
   notebook did to it counts) and grades each part from the kernel's
   variables with :meth:`Item.judge`: functions are called there, with their
   own time limit. A part whose variable is missing because its cell raised
   is reported with that cell's error.
5. A kernel that dies (``os._exit``, a segfault, memory) gives rows saying so.

The learner is the file's stem, or its parent folder's name with
``--learner-from parent``, unless the notebook's metadata has
``attn: {learner: NAME}`` (in a ``.md`` file's YAML header, or in an
``.ipynb``'s metadata).

Row fields (CSV and JSON): learner, file, item, title, status (``correct``,
``not yet``, ``not tried``, or for the whole file ``not a notebook``,
``empty``, ``no items``, ``crashed``, ``error``), parts_correct, parts_total,
score (parts_correct / parts_total), mistakes (recognised mistake keys),
parts (``name=status`` pairs), message. The JSON rows also hold each part's
full feedback, and the notes on cells that raised or timed out.
"""
from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIME = "application/vnd.attn-grades+json"
FIELDS = ["learner", "file", "item", "title", "status", "parts_correct", "parts_total", "score", "mistakes",
          "parts", "message"]
NOTEBOOK_SUFFIXES = (".md", ".ipynb")
GRADER_CALLS = {"check", "hint", "progress", "record_progress"}

_ITEM = r"[\"'](?:II\.3\.)?([A-Za-z]\d\d)[\"']"
_CALL_RE = re.compile(r"\b(?:check|hint)\(\s*" + _ITEM)
_VARIANT_RE = re.compile(r"\bvariant\(\s*" + _ITEM + r"(?:\s*,\s*(?:seed\s*=\s*)?(\d+))?")
_CHECK_SEED_RE = re.compile(r"\bcheck\(\s*" + _ITEM + r"[^)]*?\bseed\s*=\s*(\d+)")


# ----------------------------------------------------------------------------- inside the kernel

def grade_namespace(namespace: dict, spec: dict) -> dict:
    """Grade items from a notebook's variables: ``spec`` maps item ids to seeds (None for fixed items).

    Runs inside the learner's kernel (functions must be called there). Returns
    a JSON-able dict ``{item: {"title", "parts": [{"part", "status", "mistake", "message"}]}}``.
    """
    from .feedback import NOT_TRIED
    from .items import get_item

    out = {}
    for item_id, seed in spec.items():
        try:
            item = get_item(item_id)
        except KeyError:
            out[item_id] = {"title": "", "error": f"there is no item {item_id!r}"}
            continue
        if item.seeded and seed is None:
            out[item.id] = {"title": item.title, "error": "a variant needs its seed: variant(..., seed) not found"}
            continue
        parts = []
        for name in item.part_names:
            if name not in namespace:
                parts.append({"part": name, "status": NOT_TRIED, "mistake": None, "missing": True,
                              "message": f"There is no variable `{name}`."})
                continue
            try:
                fb = item.judge(name, namespace[name], seed)
                parts.append({"part": name, "status": fb.status, "mistake": fb.mistake, "message": fb.message})
            except BaseException as exc:  # noqa: BLE001 - a checker bug must not lose the other parts
                if isinstance(exc, KeyboardInterrupt):
                    raise
                parts.append({"part": name, "status": "error", "mistake": "checker",
                              "message": f"The checker failed on this part ({type(exc).__name__}: {exc})."})
        out[item.id] = {"title": item.title, "seed": seed, "parts": parts}
    return out


def _emit(namespace: dict, spec: dict) -> None:
    """The grader's last cell: grade, and send the result as one display message of MIME type :data:`MIME`."""
    from IPython.display import display

    display({MIME: grade_namespace(namespace, spec)}, raw=True)


def _grading_cell(spec: dict) -> str:
    return (
        "import sys as _attn_sys\n"
        "for _attn_m in [m for m in list(_attn_sys.modules) if m == 'attn' or m.startswith('attn.')]:\n"
        "    del _attn_sys.modules[_attn_m]  # a fresh attn: nothing the notebook did to it counts\n"
        "from attn.grading import batch as _attn_batch\n"
        f"_attn_batch._emit(globals(), {spec!r})\n"
    )


# ----------------------------------------------------------------------------- reading and preparing a notebook

class NotNotebook(Exception):
    """The file cannot be read as a notebook (the message says why)."""


def read_notebook(path: Path):
    """The notebook at ``path`` (nbformat NotebookNode), or raise :class:`NotNotebook`."""
    import jupytext
    import nbformat

    if path.suffix not in NOTEBOOK_SUFFIXES:
        raise NotNotebook(f"not a notebook: expected a .md or .ipynb file, got {path.suffix or 'no extension'}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise NotNotebook(f"cannot read the file ({exc})") from None
    if not raw.strip():
        raise NotNotebook("empty file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotNotebook("not a notebook: the file is not UTF-8 text") from None
    try:
        if path.suffix == ".ipynb":
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
        else:
            nb = jupytext.reads(text, fmt="md:myst" if text.lstrip().startswith("---") else "md")
    except Exception as exc:  # noqa: BLE001 - any parse failure means "not a notebook"
        raise NotNotebook(f"not a notebook ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''})") from None
    return nb


def items_in(nb) -> dict:
    """``{item_id: seed or None}`` for every item the notebook's code names, in order of appearance."""
    spec: dict = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = cell.source
        for m in _VARIANT_RE.finditer(src):
            spec[m[1].upper()] = int(m[2]) if m[2] else spec.get(m[1].upper())
        for m in _CALL_RE.finditer(src):
            spec.setdefault(m[1].upper(), None)
        for m in _CHECK_SEED_RE.finditer(src):
            spec[m[1].upper()] = int(m[2])
    return spec


def _is_grader_call(node: ast.stmt) -> bool:
    """``check(...)``, ``hint(...)``, ``progress()``, ``record_progress()``, ``v.check(...)``, ``v.hint()``."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Name):
        return f.id in GRADER_CALLS
    return isinstance(f, ast.Attribute) and f.attr in ("check", "hint")


def strip_grader_calls(source: str) -> str:
    """The cell without its top-level grading statements (unparsable cells are kept as they are)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    calls = [n for n in tree.body if _is_grader_call(n)]
    if not calls:
        return source
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode("utf-8")) + 1)  # ast offsets count UTF-8 bytes
    data = source.encode("utf-8")
    for n in reversed(calls):  # replace each call by `pass`, keeping whatever shares its lines
        a = starts[n.lineno - 1] + n.col_offset
        b = starts[n.end_lineno - 1] + n.end_col_offset
        data = data[:a] + b"pass" + data[b:]
    return data.decode("utf-8")


def _assigned_names(source: str) -> set:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^(\w+)\s*=", source, flags=re.M)) | set(re.findall(r"^def (\w+)", source, flags=re.M))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in getattr(node, "targets", []) + [getattr(node, "target", None)]:
            for n in ast.walk(target) if target is not None else ():
                if isinstance(n, ast.Name):
                    names.add(n.id)
    return names


def learner_of(path: Path, nb, learner_from: str = "stem") -> str:
    meta = (nb.metadata.get("attn") or {}) if nb is not None else {}
    if isinstance(meta, dict) and meta.get("learner"):
        return str(meta["learner"])
    return path.parent.name if learner_from == "parent" else path.stem


# ----------------------------------------------------------------------------- running one notebook

def _error_text(out, cell_timeout: float | None = None) -> str:
    ename, evalue = out.get("ename", "Error"), out.get("evalue", "")
    if ename == "KeyboardInterrupt" and cell_timeout is not None:  # nbclient interrupted it at the time limit
        return f"TimeoutError: the cell ran past the time limit of {cell_timeout:g} s and was stopped"
    return f"{ename}: {evalue}" if evalue else ename


def run_notebook(nb, spec: dict, cell_timeout: float, grade_timeout: float, kernel: str = "python3"):
    """Execute the prepared notebook; return ``(grades or None, notes, crash or None)``.

    ``notes`` lists ``{"cell", "error", "names"}`` for every cell that raised or
    timed out (``names``: what the cell assigns); ``crash`` says why the kernel died.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        src = strip_grader_calls(cell.source)
        if not src.strip():
            continue
        c = nbformat.v4.new_code_cell(src)
        c.metadata["tags"] = [t for t in cell.get("metadata", {}).get("tags", []) if t == "skip-execution"]
        c.metadata["attn_cell"] = len(cells) + 1
        cells.append(c)
    grader = nbformat.v4.new_code_cell(_grading_cell(spec))
    grader.metadata["attn_grader"] = True
    run = nbformat.v4.new_notebook(cells=cells + [grader])
    run.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}

    notes, crash = [], None
    with tempfile.TemporaryDirectory(prefix="attn-grade-") as cwd:
        client = NotebookClient(
            run, kernel_name=kernel, allow_errors=True, interrupt_on_timeout=True,
            timeout_func=lambda c: grade_timeout if c.metadata.get("attn_grader") else cell_timeout,
            error_on_timeout={"ename": "TimeoutError",
                              "evalue": f"the cell ran past the time limit of {cell_timeout:g} s and was stopped",
                              "traceback": []},
            resources={"metadata": {"path": cwd}},
        )
        try:
            env = {**os.environ, "ATTN_PROGRESS": "off", "ATTN_GRADING_STRICT": "0"}
            with client.setup_kernel(env=env, stderr=subprocess.DEVNULL):  # the kernel's own log lines: not ours
                for i, cell in enumerate(run.cells):
                    try:
                        client.execute_cell(cell, i)
                    except DeadKernelError:
                        crash = (f"the kernel died while running cell {cell.metadata.get('attn_cell', 'grader')}"
                                 if not cell.metadata.get("attn_grader") else "the kernel died while grading")
                        break
                    except CellTimeoutError:
                        notes.append({"cell": cell.metadata.get("attn_cell"), "error": "TimeoutError: no reply",
                                      "names": sorted(_assigned_names(cell.source))})
        except DeadKernelError:
            crash = crash or "the kernel died"
        except Exception as exc:  # noqa: BLE001 - the kernel would not start, or the client failed
            crash = crash or f"the notebook could not be run ({type(exc).__name__}: {exc})"
    grades = None
    for cell in run.cells:
        for out in cell.get("outputs", []):
            if cell.metadata.get("attn_grader"):
                if out.get("output_type") in ("display_data", "execute_result") and MIME in out.get("data", {}):
                    grades = out["data"][MIME]
                elif out.get("output_type") == "error" and crash is None:
                    crash = f"the grader's cell failed ({_error_text(out)})"
            elif out.get("output_type") == "error":
                notes.append({"cell": cell.metadata.get("attn_cell"), "error": _error_text(out, cell_timeout),
                              "names": sorted(_assigned_names(cell.source))})
    if grades is None and crash is None:
        crash = "the notebook did not finish (a cell kept running past every time limit)"
    return grades, notes, crash


# ----------------------------------------------------------------------------- rows

def _row(learner, file, item="", title="", status="", message="", parts=None) -> dict:
    parts = parts or []
    n_ok = sum(p["status"] == "correct" for p in parts)
    return {
        "learner": learner, "file": file, "item": item, "title": title, "status": status,
        "parts_correct": n_ok if parts else "", "parts_total": len(parts) if parts else "",
        "score": round(n_ok / len(parts), 4) if parts else "",
        "mistakes": " ".join(sorted({p["mistake"] for p in parts if p.get("mistake") and p["status"] != "correct"})),
        "parts": "; ".join(f"{p['part']}={p['status']}" for p in parts),
        "message": message, "detail": parts,
    }


def _item_status(parts) -> str:
    statuses = {p["status"] for p in parts}
    if statuses == {"correct"}:
        return "correct"
    if statuses <= {"not tried"}:
        return "not tried"
    if "error" in statuses:
        return "error"
    return "not yet"


def grade_file(path: Path, items: list | None = None, cell_timeout: float = 30.0, grade_timeout: float = 300.0,
               learner_from: str = "stem", kernel: str = "python3", display_name: str | None = None) -> list:
    """The rows for one file (never raises for a bad notebook)."""
    file = display_name or str(path)
    try:
        nb = read_notebook(path)
    except NotNotebook as exc:
        status = "empty" if str(exc) == "empty file" else "not a notebook"
        return [_row(learner_of(path, None, learner_from), file, status=status, message=str(exc))]
    learner = learner_of(path, nb, learner_from)
    if not any(c.cell_type == "code" and c.source.strip() for c in nb.cells):
        return [_row(learner, file, status="empty", message="the notebook has no code")]
    spec = {i.upper(): None for i in items} if items else items_in(nb)
    if items:
        spec.update({k: v for k, v in items_in(nb).items() if k in spec})
    if not spec:
        return [_row(learner, file, status="no items",
                     message="no check(\"...\") call names an item; use --items to grade it anyway")]
    grades, notes, crash = run_notebook(nb, spec, cell_timeout, grade_timeout, kernel)
    note_text = "; ".join(f"cell {n['cell']} raised {n['error']}" for n in notes)
    if grades is None:
        msg = crash + (f" (before that: {note_text})" if note_text else "")
        return [_row(learner, file, item, status="crashed", message=msg) for item in spec]
    rows = []
    for item_id, g in grades.items():
        if "error" in g:
            rows.append(_row(learner, file, item_id, g.get("title", ""), "error", g["error"]))
            continue
        parts = g["parts"]
        for p in parts:  # a missing variable whose cell raised: say so
            if p.pop("missing", False):
                culprit = next((n for n in notes if p["part"] in n["names"]), None)
                if culprit is not None:
                    p.update(status="not yet", mistake="raised",
                             message=f"The cell that defines `{p['part']}` (cell {culprit['cell']}) raised "
                                     f"{culprit['error']}.")
        message = " | ".join(f"{p['part']}: {p['message']}" for p in parts if p["status"] != "correct"
                             and not (p["status"] == "not tried"))
        row = _row(learner, file, item_id, g["title"], _item_status(parts), message, parts)
        row["notes"] = notes
        rows.append(row)
    if crash:  # graded, but something went wrong afterwards
        for r in rows:
            r["message"] = (r["message"] + " | " if r["message"] else "") + crash
    return rows


# ----------------------------------------------------------------------------- the command line

def expand(paths) -> list[Path]:
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.is_file()
                            and not any(part.startswith(".") for part in f.relative_to(p).parts))
        else:
            files.append(p)
    return files


def write_reports(rows: list, stem: Path, options: dict) -> tuple[Path, Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = stem.with_suffix(".csv"), stem.with_suffix(".json")
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    report = {"format": "attn-grades", "version": 1, "generated": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "options": options, "rows": rows}
    json_path.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return csv_path, json_path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="attn-grade", description="Grade learners' notebooks (.md or .ipynb) in fresh kernels; "
        "write a CSV and a JSON report, one row per learner and item.")
    ap.add_argument("paths", nargs="+", help="notebooks, or folders of them")
    ap.add_argument("-o", "--out", default="grades", help="report stem: writes STEM.csv and STEM.json (default: grades)")
    ap.add_argument("--items", help="comma-separated item ids to grade in every notebook (default: those it names)")
    ap.add_argument("--cell-timeout", type=float, default=30.0, help="seconds per notebook cell (default 30)")
    ap.add_argument("--grade-timeout", type=float, default=300.0, help="seconds for the grading cell (default 300)")
    ap.add_argument("--learner-from", choices=("stem", "parent"), default="stem",
                    help="learner name: the file's stem or its folder's name (metadata attn.learner wins)")
    ap.add_argument("--kernel", default="python3", help="Jupyter kernel name (default python3)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    args = ap.parse_args(argv)

    from tqdm import tqdm

    files = expand(args.paths)
    if not files:
        print("attn-grade: no files found in " + " ".join(args.paths), file=sys.stderr)
        return 2
    items = [s.strip() for s in args.items.split(",") if s.strip()] if args.items else None
    rows = []
    bar = tqdm(files, desc="grading", unit="notebook", disable=args.quiet, file=sys.stderr)
    for path in bar:
        bar.set_postfix_str(path.name)
        try:
            rows += grade_file(path, items, args.cell_timeout, args.grade_timeout, args.learner_from, args.kernel)
        except Exception as exc:  # noqa: BLE001 - one bad notebook never stops the batch
            rows.append(_row(path.stem, str(path), status="error", message=f"{type(exc).__name__}: {exc}"))
    options = {k: getattr(args, k) for k in ("items", "cell_timeout", "grade_timeout", "learner_from", "kernel")}
    csv_path, json_path = write_reports(rows, Path(args.out), options)
    if not args.quiet:
        n_ok = sum(r["status"] == "correct" for r in rows)
        print(f"{len(files)} files, {len(rows)} rows, {n_ok} items correct: wrote {csv_path} and {json_path}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
