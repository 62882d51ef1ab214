"""``attn-grade`` / ``python -m attn.grading.batch``: grade a class's notebooks, in parallel, resumably.

Files are graded by a pool of worker processes (``concurrent.futures``), or by
a Dask cluster (``--scheduler ADDRESS``: ``distributed``'s concurrent.futures
executor; the workers must see the same files and the same attn). Each file's
rows go into ``STEM.journal.jsonl`` as soon as it finishes and ``STEM.csv`` is
rewritten then; a rerun with the same options skips the files already graded
(unchanged content), so an interrupted run resumes. At the end: ``STEM.csv``,
``STEM.json`` and the class report ``STEM.html``.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import stat
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from . import rows as _rows  # (main has a local called rows)
from .rows import Journal, flag_duplicates, make_row, write_csv, write_json
from .sandbox import Limits, NoSandbox, check_available

OUTPUT_SUFFIXES = (".csv", ".json", ".html", ".journal.jsonl")
HIDDEN = "[hidden] "
SYMLINK = "[symlink] "


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def outputs(stem: Path) -> list[Path]:
    return [stem.with_name(stem.name + s) for s in OUTPUT_SUFFIXES]


def _own_output(path: Path) -> bool:
    """A report this grader wrote (under any stem): never graded as a submission. Only a file with a report's
    suffix is looked at, so a notebook (``.md``, ``.ipynb``) is always graded, whatever its first bytes say."""
    if not any(path.name.endswith(s) for s in OUTPUT_SUFFIXES):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(300)
    except OSError:
        return False
    return (head.startswith(b"learner,claimed,file,item") or b'"format": "attn-grades"' in head
            or head.startswith(b'{"key": ') or b"<title>Class report</title>" in head)


def expand(paths, stem: Path | None = None) -> list[tuple[Path, str]]:
    """``(path, shown name)`` of every file to grade; outputs are left out; hidden files (a name starting with
    ``.`` inside a given folder) are kept, their shown name marked ``[hidden] ``, and get a row saying so."""
    skip = {p.resolve() for p in outputs(stem)} if stem is not None else set()
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            found = []
            for top, dirs, names in os.walk(p):  # symbolic links to folders are not entered
                found += [Path(top) / n for n in names]
                found += [Path(top) / d for d in dirs if (Path(top) / d).is_symlink()]
            for f in sorted(found):
                if f.is_symlink():
                    files.append((f, SYMLINK + str(f)))  # never followed: it may point at any file of yours
                elif f.is_file() and f.resolve() not in skip and not f.name.endswith(".tmp") and not _own_output(f):
                    hidden = any(part.startswith(".") for part in f.relative_to(p).parts)
                    files.append((f, HIDDEN + str(f) if hidden else str(f)))
        elif p.resolve() not in skip:
            files.append((p, str(p)))
    return files


def _key(path: Path) -> str:
    """The journal's key for a file: its path and a digest of its bytes. Only a regular file is read, streamed (a
    link to ``/dev/zero`` or a named pipe among the submissions would otherwise hang the grader or fill its memory);
    a symbolic link is keyed by where it points, never followed."""
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            return f"{Path(os.path.abspath(path))}#link:{hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()[:20]}"
        if not stat.S_ISREG(st.st_mode):
            return f"{Path(os.path.abspath(path))}#special"
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = h.hexdigest()[:20]
    except OSError:
        digest = "unreadable"
    return f"{path.resolve()}#{digest}"


def grade_task(path: str, shown: str, options: dict) -> list[dict]:
    """One file's rows (runs in a worker process; never raises for a bad notebook)."""
    from .grade import grade_file

    try:
        return grade_file(Path(path), options["items"], options["cell_timeout"], options["grade_timeout"],
                          options["learner_from"], options["sandbox"], options["notebook_timeout"],
                          Limits(**options["limits"]), display_name=shown)
    except Exception as exc:  # noqa: BLE001 - one bad notebook never stops the batch
        return [make_row(Path(path).stem, shown, status="error", message=f"{type(exc).__name__}: {exc}")]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="attn-grade", description="Grade learners' notebooks (.md or .ipynb), each in its own sandboxed kernel; "
        "write STEM.csv, STEM.json and a class report STEM.html: one row per learner and item.")
    ap.add_argument("paths", nargs="+", help="notebooks, or folders of them")
    ap.add_argument("-o", "--out", default="grades", help="report stem (default: grades)")
    ap.add_argument("--items", help="comma-separated item ids to grade in every notebook (default: those it names)")
    ap.add_argument("--cell-timeout", type=float, default=30.0, help="seconds per notebook cell (default 30)")
    ap.add_argument("--notebook-timeout", type=float, default=600.0,
                    help="wall-clock seconds for all of a notebook's cells (default 600)")
    ap.add_argument("--grade-timeout", type=float, default=120.0,
                    help="seconds for handing the answers over, function tests included (default 120)")
    ap.add_argument("--learner-from", choices=("stem", "parent"), default="stem",
                    help="learner name: the file's stem or its folder's name (a notebook's own claim is only shown)")
    ap.add_argument("-j", "--jobs", type=int, default=usable_cores(),
                    help=f"notebooks graded at once (default: the usable cores, {usable_cores()} here)")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="grade on a Dask distributed cluster (tcp://host:8786)")
    ap.add_argument("--no-sandbox", action="store_true",
                    help="run kernels without bubblewrap: a submission can then read and change anything you can")
    ap.add_argument("--memory-mb", type=int, default=Limits.memory_mb, help="address-space limit per process")
    ap.add_argument("--max-processes", type=int, default=Limits.processes, help="process limit per notebook")
    ap.add_argument("--file-mb", type=int, default=Limits.file_mb, help="largest file a notebook may write")
    ap.add_argument("--fresh", action="store_true", help="ignore the journal of an earlier run (no resume)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    return ap


def main(argv=None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    stem = Path(args.out)
    if stem.suffix in (".csv", ".json", ".html"):
        stem = stem.with_suffix("")
    if not args.no_sandbox:
        try:
            check_available()
        except NoSandbox as exc:
            print(f"attn-grade: refusing to run submissions without a sandbox: {exc}", file=sys.stderr)
            return 3
    files = expand(args.paths, stem)
    if not files:
        print("attn-grade: no files found in " + " ".join(args.paths), file=sys.stderr)
        return 2
    if not args.no_sandbox:
        from .sandbox import visible_inside

        seen = visible_inside([p for p, _ in files] + [stem.parent])
        if seen:
            print("attn-grade: warning: these paths lie inside folders every sandbox can read (Python, the venv, "
                  "attn's folder), so each submission can read them: " + ", ".join(map(str, seen[:5])),
                  file=sys.stderr)
    items = [s.strip().upper() for s in args.items.split(",") if s.strip()] if args.items else None
    if items:
        from ..items import items as all_items, short_id

        items = [short_id(i) for i in items]
        unknown = [i for i in items if i not in {it.id for it in all_items()}]
        if unknown:
            ap.error(f"--items: no item {', '.join(unknown)}; the items are {', '.join(it.id for it in all_items())}")
    options = {"items": items, "cell_timeout": args.cell_timeout, "grade_timeout": args.grade_timeout,
               "notebook_timeout": args.notebook_timeout, "learner_from": args.learner_from,
               "sandbox": not args.no_sandbox,
               "limits": {"memory_mb": args.memory_mb, "processes": args.max_processes, "file_mb": args.file_mb},
               "grader": _rows.grader_fingerprint()}
    stem.parent.mkdir(parents=True, exist_ok=True)
    journal_path = outputs(stem)[3]
    if args.fresh and journal_path.exists():
        journal_path.unlink()
    journal = Journal(journal_path, options)
    keys = {shown: _key(path) for path, shown in files}
    todo = [(p, s) for p, s in files if keys[s] not in journal.done]

    def all_rows():
        return flag_duplicates([dict(r) for p, s in files if keys[s] in journal.done for r in journal.done[keys[s]]])

    from tqdm import tqdm

    bar = tqdm(total=len(files), initial=len(files) - len(todo), desc="grading", unit="notebook",
               disable=args.quiet, file=sys.stderr)
    client = None
    if args.scheduler:
        from distributed import Client

        client = Client(args.scheduler)
        executor = client.get_executor()
    else:
        import multiprocessing

        executor = ProcessPoolExecutor(max_workers=max(1, args.jobs),
                                       mp_context=multiprocessing.get_context("spawn"))
    interrupted = False
    try:
        pending = {executor.submit(grade_task, str(p), s, options): s for p, s in todo}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                shown = pending.pop(fut)
                try:
                    rows = fut.result()
                except Exception as exc:  # noqa: BLE001 - a worker lost: that file gets a row
                    rows = [make_row(Path(shown).stem, shown, status="error",
                                     message=f"the worker grading it failed ({type(exc).__name__}: {exc})")]
                journal.add(keys[shown], rows)
                write_csv(all_rows(), stem.with_name(stem.name + ".csv"))
                bar.update(1)
                bar.set_postfix_str(Path(shown).name)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if client is not None:
            client.close()
        else:
            executor.shutdown(wait=not interrupted, cancel_futures=True)
        journal.close()
        bar.close()
    rows = all_rows()
    write_csv(rows, stem.with_name(stem.name + ".csv"))
    if interrupted:
        print(f"attn-grade: interrupted; {len(journal.done)} of {len(files)} files graded and kept in "
              f"{journal_path}: run the same command again to go on", file=sys.stderr)
        return 130
    write_json(rows, stem.with_name(stem.name + ".json"), {**options, "jobs": args.jobs, "scheduler": args.scheduler})
    from .report import write_html

    write_html(rows, stem.with_name(stem.name + ".html"))
    if not args.quiet:
        n_ok = sum(r["status"] == "correct" for r in rows)
        print(f"{len(files)} files, {len(rows)} rows, {n_ok} items correct: wrote {stem}.csv, .json and .html",
              file=sys.stderr)
    return 0
