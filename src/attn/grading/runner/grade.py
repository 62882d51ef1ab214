"""Grading one submission: its cells in a sandboxed kernel, its values handed over, its verdicts judged here.

1. The notebook is read (``.md``/``.MD`` MyST or plain Markdown, ``.ipynb``; UTF-8, else Latin-1).
2. Its items are those its code names (``check("E01", ...)``, ``hint``,
   ``variant("V01", seed)``); ``--items`` overrides. A variant's seed is read
   from the ``Variant`` objects the notebook made (``variant("V01", seed)``
   with a variable) and from the literals in the code; when there are several,
   the answers are judged against the one they fit best.
3. The learner's own ``check``/``hint``/``progress`` statements are removed
   (a ``check`` given its answers as arguments becomes their assignment to the
   parts' variables); a first cell makes every other ``check`` (nested, or
   under another name) record the answers it is given; the cells run in order in a fresh sandboxed kernel, each with a time
   limit. A cell that raises or is interrupted at its limit is noted and the
   next one runs. A cell that ignores the interrupt is killed with its kernel; a
   new kernel re-runs the cells before it (not it) and goes on, so the answers
   assigned before it are still graded. A wall-clock cap per notebook stops the
   cells, never the hand-over.
4. The grader's last cell hands the values over (:mod:`collect`) and the
   verdicts are computed in this process.
"""
from __future__ import annotations

import time
from pathlib import Path

from . import collect
from .kernel import Kernel
from .notebook import (NotNotebook, assigned_names, claimed_name, code_cells, flags, items_in, name_key,
                       own_name, read_notebook, seeds_in, strip_grader_calls)
from .rows import make_row
from .sandbox import Limits
from .tampering import means as tampering_means


_SANDBOX_CHECKED = []
TAMPERED_CRASH = "tampered with the hand-over"
UNTRUSTED_FLAG = "tampering"  # a row with it that would give credit is "review": no credit until a person reads it


def _sandbox_ok() -> None:
    """Raise :class:`sandbox.NoSandbox` (once checked, remembered) when no sandbox can run here."""
    if not _SANDBOX_CHECKED:
        from .sandbox import check_available

        check_available()
        _SANDBOX_CHECKED.append(True)


def _spec_for(nb, items):
    spec = {i.upper(): None for i in items} if items else items_in(nb)
    if items:
        spec.update({k: v for k, v in items_in(nb).items() if k in spec})
    return spec


def _known(spec: dict) -> tuple[dict, str]:
    """``(spec, note)``: the items that exist, and a note for the learner naming the ids that do not (``check("Z99")``,
    a typo or a hostile notebook): they are not items of the class's grades, so never rows of their own."""
    from ..items import get_item, items

    unknown = []
    for item_id in list(spec):
        try:
            get_item(item_id)
        except KeyError:
            unknown.append(item_id)
            del spec[item_id]
    if not unknown:
        return spec, ""
    return spec, (f"the notebook names {', '.join(map(repr, unknown[:5]))}{' and more' if len(unknown) > 5 else ''}, "
                  f"which {'is not an item' if len(unknown) == 1 else 'are not items'} of this chapter (its items "
                  f"are {', '.join(it.id for it in items())})")


def _function_jobs(spec: dict) -> tuple[set, dict]:
    """Every part name to hand over, and each function part's cases (computed here) and time limit."""
    from ..items import get_item

    names, functions = set(), {}
    for item_id, seed in spec.items():
        try:
            item = get_item(item_id)
        except KeyError:
            continue
        for part in item.parts:
            names.add(part.name)
            if part.kind == "function" and not (item.seeded and seed is None):  # (no variant has one today)
                functions[part.name] = {"cases": item.cases(part.name, seed), "seconds": part.seconds}
    return names, functions


def _part_names_of(item_id: str) -> list:
    from ..items import get_item

    try:
        return list(get_item(item_id).part_names)
    except KeyError:
        return []


MAX_SEEDS = 16  # seeds tried per variant item (a notebook making thousands of variants costs no more)
CODE_LIMIT = 256_000  # bytes of code the grader reads and runs per notebook
NOTES_KEPT, NAMES_KEPT = 20, 20  # per row: a notebook of a hundred failing cells cannot fill the reports
SEEDS_TO_REVIEW = 3  # more candidate seeds than this and a right answer may be a guess that fits one of them


def _seed_candidates(spec: dict, literal: dict, data) -> dict:
    """``{item_id: [seed, ...]}``, the seeds an item's answers may follow. The seeds the learner's own checks used
    (``v.check()``, ``check("V01", seed=s)``), most recent first, when there are any: the learner said which variant
    they answered. Otherwise those of the ``Variant`` objects the notebook holds at the end (in the order it made
    them), then every literal seed in its code. A learner who answers ``v = variant("V01", 0)`` and then looks at
    ``variant("V01", 3)`` answered seed 0, not 3."""
    def pairs(key):
        out: dict = {}
        for v in (data or {}).get(key, []) if isinstance(data, dict) else []:
            if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int) and v[1] >= 0:
                out.setdefault(v[0].upper(), []).append(v[1])
        return out

    held, checked = pairs("variants"), pairs("checked")
    out = {}
    for item_id, seed in spec.items():
        if seed is not None and _has_function_part(item_id):  # its cases were computed for this seed
            out[item_id] = [seed]
            continue
        if checked.get(item_id):
            found = checked[item_id][::-1]
        else:
            found = held.get(item_id, []) + literal.get(item_id, []) + ([seed] if seed is not None else [])
        out[item_id] = list(dict.fromkeys(found))[:MAX_SEEDS]
    return out


def _has_function_part(item_id: str) -> bool:
    from ..items import get_item

    try:
        return any(p.kind == "function" for p in get_item(item_id).parts)
    except KeyError:
        return False


def _judge_best_seed(spec: dict, seeds: dict, data) -> dict:
    """Each item judged against the seed its answers fit best (most parts correct; on a tie, the first candidate).
    Every seed is the learner's free choice, so this credits nothing a right answer for some seed would not."""
    judged = collect.judge_items({k: (seeds.get(k) or [None])[0] for k in spec}, data)
    for item_id, candidates in seeds.items():
        if len(candidates) < 2 or "parts" not in judged.get(item_id, {}):
            continue

        def n_correct(g):
            return sum(p["status"] == "correct" for p in g.get("parts", []))

        best = judged[item_id]
        for seed in candidates[1:]:
            g = collect.judge_items({item_id: seed}, data)[item_id]
            if n_correct(g) > n_correct(best):
                best = g
        if len(candidates) > SEEDS_TO_REVIEW and n_correct(best):
            best["review"] = (f"the notebook made or checked {len(candidates)} variants of {item_id}; judged against "
                              f"seed {best.get('seed')}, the one its answers fit best: look at which one the learner "
                              "answered")
        judged[item_id] = best
    return judged


PRELUDE_SECONDS = 60.0  # the first cell imports attn.grading in the kernel


def _start(kernel: Kernel) -> None:
    """A fresh kernel in which every ``check`` records the answers it is given (:func:`collect.prelude_source`)."""
    kernel.start()
    kernel.execute(collect.prelude_source(), PRELUDE_SECONDS)


def _replay(kernel: Kernel, cells: list[str], upto: int, skip: set, cell_timeout: float, wall: float,
            start: float, notes: list) -> bool:
    """Start a new kernel and re-run the cells before ``upto`` that are not in ``skip`` (the state before a killed
    cell, without it). A cell that stops this kernel too joins ``skip`` and the replay starts over. False after
    more than three such cells."""
    while len(skip) <= 3:
        _start(kernel)
        for j in range(upto):
            left = wall - (time.monotonic() - start)
            if j in skip or left <= 0:
                continue
            if kernel.execute(cells[j], min(cell_timeout, left)).status in ("killed", "dead"):
                notes.append({"cell": j + 1, "error": "KernelRestart: the cell stopped the kernel again when it was "
                              "re-run after a restart, and was left out", "names": sorted(assigned_names(cells[j]))})
                skip.add(j)
                kernel.kill()
                break
        else:
            return True
    return False


def run_cells(cells: list[str], req: dict, cell_timeout: float, wall: float, grade_timeout: float,
              sandboxed: bool, limits: Limits) -> tuple[dict | None, list, str | None]:
    """``(hand-over or None, notes, crash)``: notes are ``{"cell", "error", "names"}`` for cells that failed."""
    notes, crash = [], None
    skip: set[int] = set()
    kernel = Kernel(sandboxed=sandboxed, limits=limits)
    start = time.monotonic()
    try:
        _start(kernel)
        i = 0
        while i < len(cells):
            left = wall - (time.monotonic() - start)
            if left <= 0:
                notes.append({"cell": i + 1, "error": f"WallClock: the notebook's time cap of {wall:g} s was reached; "
                              f"cells {i + 1} to {len(cells)} were not run", "names": []})
                break
            if i in skip:
                i += 1
                continue
            limit = min(cell_timeout, left)
            r = kernel.execute(cells[i], limit)
            names = sorted(assigned_names(cells[i]))
            if r.status == "timeout":
                notes.append({"cell": i + 1, "error": f"TimeoutError: the cell ran past the time limit of {limit:g} s "
                              "and was interrupted", "names": names})
            elif r.status == "error":
                what = f"{r.ename}: {r.evalue}" if r.evalue else r.ename
                notes.append({"cell": i + 1, "error": what, "names": names})
            elif r.status in ("killed", "dead"):
                why = ("ignored the interrupt at its time limit and was killed" if r.status == "killed"
                       else "stopped the kernel (os._exit, a crash or the memory limit)")
                notes.append({"cell": i + 1, "error": f"KernelRestart: the cell {why}; a new kernel re-ran the cells "
                              "before it", "names": names})
                skip.add(i)
                kernel.kill()
                if not _replay(kernel, cells, i, skip, cell_timeout, wall, start, notes):
                    crash = "more than three cells stopped the kernel"
                    break
            if r.capped:
                notes.append({"cell": i + 1, "error": f"OutputCapped: the cell printed {r.printed:,} characters or "
                              "more (not kept)", "names": []})
            i += 1
        if crash is None:
            r = kernel.execute(collect.cell_source(req), grade_timeout, keep_stdout=True,
                               keep_limit=collect.LIMITS["total"] + 2**16)
            data = collect.parse(r.stdout, req["nonce"])
            if data is not None and collect.TAMPERED in data:
                return None, notes, (f"{TAMPERED_CRASH}: the grader's answer line was printed {data[collect.TAMPERED]} "
                                     "times, so code in the notebook printed one of its own")
            if data is not None and not isinstance(data.get("values"), dict):  # {"error": "... too large ..."}
                why = data.get("error")
                crash = "the answers could not be handed over" + (f" ({str(why)[:200]})" if why else "")
                return None, notes, crash
            if data is None:
                crash = ("the kernel died while handing the answers over" if r.status in ("killed", "dead")
                         else "the answers could not be handed over" + (f" ({r.ename}: {r.evalue})" if r.ename else ""))
            return data, notes, crash
        return None, notes, crash
    except Exception as exc:  # noqa: BLE001 - the kernel would not start: a row says so
        return None, notes, f"the notebook could not be run ({type(exc).__name__}: {exc})"
    finally:
        kernel.close()


def grade_file(path: Path, items: list | None = None, cell_timeout: float = 30.0, grade_timeout: float = 120.0,
               learner_from: str = "stem", sandboxed: bool = True, wall: float = 600.0,
               limits: Limits | None = None, display_name: str | None = None) -> list[dict]:
    """The rows for one file (never raises for a bad notebook)."""
    path = Path(path)
    file = display_name or str(path)
    learner = own_name(path, learner_from)
    if file.startswith("[symlink] "):  # a symbolic link inside a folder given to the grader (cli.expand)
        return [make_row(learner, file[len("[symlink] "):], status="skipped",
                         message="a symbolic link: not followed (it could point at any file the grader can read)")]
    if sandboxed:
        _sandbox_ok()
    if file.startswith("[hidden] "):  # a hidden file inside a folder given to the grader (cli.expand)
        return [make_row(learner, file[len("[hidden] "):], status="skipped",
                         message="hidden file: not graded (rename it, or name it on the command line, to grade it)")]
    try:
        nb, read_notes = read_notebook(path)
    except NotNotebook as exc:
        status = "empty" if str(exc) == "empty file" else "not a notebook"
        return [make_row(learner, file, status=status, message=str(exc))]
    claimed = claimed_name(nb)
    row_flags = []
    if claimed and name_key(claimed) != name_key(learner):
        row_flags.append("claims_other_learner")
    if read_notes:
        row_flags.append("encoding" if any("Latin-1" in n for n in read_notes) else "suffix")
    base = {"claimed": claimed or ""}
    if not any(s.strip() for s in code_cells(nb)):
        return [make_row(learner, file, status="empty", message="the notebook has no code", flags=row_flags, **base)]
    spec, unknown = _known(_spec_for(nb, items))
    if not spec:
        why = unknown or 'no check("...") call names an item; use --items to grade it anyway'
        return [make_row(learner, file, status="no items", flags=row_flags, **base, message=why)]
    code_bytes = sum(len(c.encode("utf-8", "surrogatepass")) for c in code_cells(nb))
    if code_bytes > CODE_LIMIT:  # reading it is the grader's own time and memory, outside every limit
        return [make_row(learner, file, item, status="review", flags=row_flags + ["code_too_large"], **base,
                         message=f"review: the notebook holds {code_bytes // 1000} kB of code, more than the grader "
                                 f"reads ({CODE_LIMIT // 1000} kB; a learner's answers take a few kB); not run")
                for item in spec]
    names, functions = _function_jobs(spec)
    code_flags = flags(nb, set(functions))
    row_flags += [f for f in code_flags if not f.startswith("uses_attn_in:")]
    # the learner's checks run as they are: in the grader's kernel each records its answers and judges nothing
    cells = [c for c in code_cells(nb) if c.strip()]
    means = tampering_means(cells)
    if means:
        row_flags.append("tampering")
    rows = _graded_rows(learner, file, spec, unknown, nb, cells, functions, names, code_flags, row_flags, read_notes,
                        base, cell_timeout, wall, grade_timeout, sandboxed, limits)
    for r in rows:
        r["notes"] = [{**n, "error": str(n.get("error", ""))[:300], "names": list(n.get("names", []))[:NAMES_KEPT]}
                      for n in r["notes"][:NOTES_KEPT]] + (
            [{"cell": None, "error": f"and {len(r['notes']) - NOTES_KEPT} more cells failed", "names": []}]
            if len(r["notes"]) > NOTES_KEPT else [])
    for r in rows:
        _to_review(r, means)
    return rows


def _to_review(row: dict, means: list) -> None:
    """A row that would give credit, from code that could change what the grader reads (``tampering``), is
    ``review``: its ``parts`` stay as judged, for the person who reads the code; its status, score and
    ``parts_correct`` do not count."""
    if UNTRUSTED_FLAG not in row["flags"].split() or not (row["status"] == "correct" or row["parts_correct"]):
        return
    if row["status"] == "review":  # the hand-over itself was forged, or many seeds: its message says why
        return
    shown = ", ".join(means[:8]) + (f" and {len(means) - 8} more" if len(means) > 8 else "")
    _withhold(row, f"the code uses {shown}: a way to reach the grader's hand-over or its expected answers that "
                   "honest work does not need")


def _withhold(row: dict, why: str) -> None:
    """Status ``review``: the parts keep their verdicts for the person who reads the code; no score counts."""
    row["status"], row["score"], row["parts_correct"] = "review", "", ""
    row["message"] = (f"review: {why}; no credit until a person has read it"
                      + (f" | {row['message']}" if row["message"] else ""))


def _graded_rows(learner, file, spec, unknown, nb, cells, functions, names, code_flags, row_flags, read_notes, base,
                 cell_timeout, wall, grade_timeout, sandboxed, limits) -> list[dict]:
    req = collect.request(names, functions, items={i: _part_names_of(i) for i in spec})
    data, notes, crash = run_cells(cells, req, cell_timeout, wall, grade_timeout, sandboxed, limits or Limits())
    seeds = _seed_candidates(spec, seeds_in(nb), data)
    note_text = "; ".join(f"cell {n['cell']} {n['error']}" for n in notes)
    prefix = "; ".join(read_notes)
    if data is None and crash and crash.startswith(TAMPERED_CRASH):
        return [make_row(learner, file, item, status="review", message=f"review: the notebook {crash}",
                         flags=row_flags + ["tampering"], notes=notes, **base) for item in spec]
    if data is None:
        msg = crash + (f" (before that: {note_text})" if note_text else "") + (f" | {unknown}" if unknown else "")
        return [make_row(learner, file, item, status="crashed", message=msg, flags=row_flags, notes=notes, **base)
                for item in spec]
    rows = []
    def item_flags(item_id):
        from ..items import get_item
        try:
            mine = {f"uses_attn_in:{n}" for n in get_item(item_id).part_names}
        except KeyError:
            mine = set()
        return row_flags + [f for f in code_flags if f in mine]

    for item_id, g in _judge_best_seed(spec, seeds, data).items():
        if "error" in g:
            rows.append(make_row(learner, file, item_id, g.get("title", ""), "error", g["error"], flags=item_flags(item_id),
                                 notes=notes, **base))
            continue
        parts = g["parts"]
        for p in parts:  # a missing variable whose cell failed: say which
            if p.pop("missing", False):
                culprit = next((n for n in notes if p["part"] in n["names"]), None)
                if culprit is not None:
                    p.update(status="not yet", mistake="raised" if "Timeout" not in culprit["error"] else "timeout",
                             message=f"The cell that defines `{p['part']}` (cell {culprit['cell']}) failed: "
                                     f"{culprit['error']}.")
        message = " | ".join(f"{p['part']}: {p['message']}" for p in parts if p["status"] not in ("correct",
                                                                                                  "not tried"))
        extra = [t for t in (prefix, crash, unknown,
                             "; ".join(f"cell {n['cell']} {n['error']}" for n in notes
                                       if n["error"].startswith(("KernelRestart", "WallClock", "OutputCapped"))))
                 if t]
        if extra:
            message = " | ".join([message] + extra if message else extra)
        row = make_row(learner, file, item_id, g["title"], None, message, parts=parts,
                       flags=item_flags(item_id) + (["many_seeds"] if g.get("review") else []), notes=notes,
                       seed=g.get("seed"), **base)
        if g.get("review") and row["parts_correct"]:
            _withhold(row, g["review"])
        rows.append(row)
    return rows
