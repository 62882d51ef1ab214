"""Handing the learner's values over, and judging them in the grader's own process.

The grader's last cell (:mod:`kernel_side`, sent as text) prints one line
``NONCE<json>``. Here that line is read as *hostile data*: size-capped, parsed
as JSON (never unpickled, never evaluated), and decoded into plain numbers,
strings, lists and NumPy arrays of numeric or boolean dtype only. Verdicts come
from :meth:`Item.judge` (values) and :meth:`Item.judge_outcomes` (functions)
here, where nothing the notebook did can reach them.
"""
from __future__ import annotations

import json
import secrets
from pathlib import Path

import numpy as np

from ..feedback import NOT_TRIED
from ..run import Outcome

LIMITS = {"str": 100_000, "elements": 1_000_000, "bytes": 4_000_000, "total": 32_000_000}
# attn.grading.stub first (is_stub, standard library only), then the last cell's own code
_KERNEL_SIDE = "\n\n".join(path.read_text(encoding="utf-8")
                             for path in (Path(__file__).parents[1] / "stub.py", Path(__file__).parent / "kernel_side.py"))


class Opaque:
    """Stands for a value the kernel could not hand over (an object of some other type): judged as junk."""

    def __init__(self, type_name: str, text: str = ""):
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text or f"<{self.type_name}>"


def _stub(*args, **kwargs):
    ...


def _function_placeholder(*args, **kwargs):
    raise RuntimeError("the learner's function runs in the sandbox only")


def encode(v):
    """Grader side: a case argument as JSON-able data (arrays, numbers, None, tuples)."""
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return {"$": "array", "dtype": a.dtype.str, "shape": list(a.shape), "data": a.ravel().tolist()}
    if isinstance(v, (list, tuple)):
        return {"$": "list" if isinstance(v, list) else "tuple", "items": [encode(x) for x in v]}
    return v


def decode(v, depth: int = 0):
    """The learner's value from its JSON form; anything unexpected becomes an :class:`Opaque`."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if not isinstance(v, dict) or depth > 8:
        return Opaque(type(v).__name__)
    kind = v.get("$")
    try:
        if kind == "array":
            dtype = np.dtype(str(v["dtype"]))
            if dtype.kind not in "biuf":
                return Opaque("ndarray", f"an array of dtype {dtype}")
            shape = tuple(int(n) for n in v["shape"])
            data = v["data"]
            if not isinstance(data, list) or int(np.prod(shape)) != len(data) or len(data) > LIMITS["elements"]:
                return Opaque("ndarray", "a damaged array")
            return np.array(data, dtype=np.float64 if dtype.kind == "f" else dtype).astype(dtype).reshape(shape)
        if kind in ("list", "tuple"):
            items = [decode(x, depth + 1) for x in v["items"]]
            return items if kind == "list" else tuple(items)
        if kind == "ellipsis":
            return Ellipsis
        if kind == "function":
            return _stub if v.get("stub") else _function_placeholder
        if kind == "object":
            return Opaque(str(v.get("type", "object"))[:80], str(v.get("text", ""))[:200])
    except (KeyError, TypeError, ValueError, OverflowError):
        pass
    return Opaque("object")


def request(item_parts: dict, functions: dict, nonce: str | None = None, items: dict | None = None) -> dict:
    """What the last cell is asked for: the variable names, each item's part names (for the answers its own
    checks recorded), and each function part's cases and time limit."""
    return {"nonce": nonce or "ATTN" + secrets.token_hex(16), "names": sorted(item_parts),
            "items": {k: sorted(v) for k, v in (items or {}).items()},
            "functions": {name: {"cases": [encode(tuple(c)) for c in job["cases"]], "seconds": job["seconds"]}
                          for name, job in functions.items()},
            "limits": LIMITS}


def literal(v) -> str:
    """Python source that builds ``v`` (dicts, lists, str, int, float, bool, None) when the kernel compiles it:
    the request reaches the kernel with no library call there that the notebook could have hooked (a decoder's
    hook once read the request, secret and all). Infinities are 1e999; a NaN is ``_attn_b.float('nan')``."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(literal(x) for x in v) + "]"
    if isinstance(v, float) and not np.isfinite(v):
        return "_attn_b.float('nan')" if np.isnan(v) else ("1e999" if v > 0 else "-1e999")
    if v is None or isinstance(v, (bool, int, float, str)):
        return repr(v)
    raise TypeError(f"a request holds only plain data; got {type(v).__name__}")


def cell_source(req: dict) -> str:
    """The grader's last cell: the kernel-side code in a fresh namespace, then one call. The builtins it uses are
    taken from the ``builtins`` module: a learner's ``from re import *`` (``re.compile``) or a variable named
    ``exec`` or ``globals`` must not stop the hand-over."""
    return (f"_attn_b = __import__('builtins')\n"
            f"_attn_b.exec(_attn_b.compile({_KERNEL_SIDE!r}, '<attn-collect>', 'exec'), _attn_ns := {{}})\n"
            f"_attn_ns['_attn_collect'](_attn_b.globals(), {literal(req)})\n")


def prelude_source() -> str:
    """The grader's first cell, run before the learner's: from then on every ``check`` in the kernel records the
    answers it is given as arguments, for the last cell to hand over (``kernel_side._attn_listen``)."""
    return (f"_attn_b = __import__('builtins')\n"
            f"_attn_b.exec(_attn_b.compile({_KERNEL_SIDE!r}, '<attn-collect>', 'exec'), _attn_ns := {{}})\n"
            f"_attn_ns['_attn_listen'](_attn_b.globals())\n"
            f"del _attn_b, _attn_ns\n")


TAMPERED = "tampered"


def parse(stdout: str, nonce: str) -> dict | None:
    """The kernel's answer from the last cell's printed text, or None if it is missing or malformed.

    The last cell prints its line once. More than one line with the nonce means code of the notebook's own printed
    one (it read the nonce while the cell ran): ``{TAMPERED: n}``, never a hand-over to judge."""
    lines = stdout.splitlines()
    n = sum(nonce in line for line in lines)
    if n > 1:
        return {TAMPERED: n}
    for line in lines:
        at = line.find(nonce)  # (text printed before it without a newline may share its line)
        if at >= 0 and len(line) - at <= LIMITS["total"] + 1000:
            try:
                data = json.loads(line[at + len(nonce):])
            except (ValueError, RecursionError):
                return None
            return data if isinstance(data, dict) else None
    return None


def outcomes(raw) -> list[Outcome]:
    """Function outcomes from the kernel's JSON (hostile: only value, error text, timed_out, warnings)."""
    out = []
    for o in raw if isinstance(raw, list) else []:
        if not isinstance(o, dict):
            break
        if o.get("timed_out"):
            out.append(Outcome(timed_out=True))
            break
        warnings = tuple(str(w)[:200] for w in o.get("warnings", []) if isinstance(w, str))[:10]
        if "error" in o:
            out.append(Outcome(error=str(o["error"])[:600], warnings=warnings))
        else:
            out.append(Outcome(value=decode(o.get("value")), warnings=warnings))
    return out


def judge_items(spec: dict, data: dict | None) -> dict:
    """``{item: {"title", "seed", "parts": [...]}}`` from the kernel's hand-over, judged here."""
    from ..items import get_item

    data = data if isinstance(data, dict) else {}
    all_values = data.get("values") if isinstance(data.get("values"), dict) else {}
    by_item = data.get("by_item") if isinstance(data.get("by_item"), dict) else {}
    functions = data.get("functions") if isinstance(data.get("functions"), dict) else {}
    out = {}
    for item_id, seed in spec.items():
        try:
            item = get_item(item_id)
        except KeyError:
            out[item_id] = {"title": "", "error": f"there is no item {item_id!r}"}
            continue
        # the notebook's variables as they end, and the answers this item's own last check saw: a part is right if
        # either is (B01 checked, then its variables reused for B04; an answer fixed after its check)
        own = by_item.get(item.id) if isinstance(by_item.get(item.id), dict) else {}
        values = {**own, **all_values}
        checked = {**all_values, **own}
        if item.seeded and seed is None:
            out[item.id] = {"title": item.title, "error": "a variant needs its seed: no variant(..., seed) was made"}
            continue
        given = {n: decode(values[n]) for n in item.part_names if n in values}
        given_checked = {n: decode(checked[n]) for n in item.part_names if n in checked}
        parts = []
        for name in item.part_names:
            if name not in values:
                parts.append({"part": name, "status": NOT_TRIED, "mistake": None, "missing": True,
                              "message": f"There is no variable `{name}`."})
                continue
            try:
                part = item.part(name)
                value = given[name]
                if part.kind == "function" and value is _function_placeholder:
                    outs = outcomes(functions.get(name))
                    if not outs:
                        parts.append({"part": name, "status": "not yet", "mistake": "raised",
                                      "message": "Your function could not be run on the tests."})
                        continue
                    n_cases = len(item.cases(name, seed))
                    outs = outs[:n_cases] + [Outcome(error="Your function gave no result on this test.")] * (
                        n_cases - len(outs))  # a short hand-over never passes the missing tests
                    fb = item.judge_outcomes(name, outs, seed)
                else:
                    others = {k: v for k, v in given.items() if k != name}
                    fb = item.judge(name, value, seed, given=others)
                    if not fb.correct and name in own and own[name] != all_values.get(name):
                        alt = item.judge(name, given_checked[name], seed,
                                         given={k: v for k, v in given_checked.items() if k != name})
                        fb = alt if alt.correct else fb
                parts.append({"part": name, "status": fb.status, "mistake": fb.mistake, "message": fb.message})
            except Exception as exc:  # noqa: BLE001 - a checker bug must not lose the other parts
                parts.append({"part": name, "status": "error", "mistake": "checker",
                              "message": f"The checker failed on this part ({type(exc).__name__}: {exc})."})
        out[item.id] = {"title": item.title, "seed": seed, "parts": parts}
    return out
