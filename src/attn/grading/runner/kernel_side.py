"""The grader's last cell, as run *inside the learner's kernel* (this file is sent as text, never imported there).

It only hands values over: it reads the variables the grader asks for, runs
each function part on its cases in a forked, time-limited child process, and
prints one line ``NONCE<json>``. Nothing here decides a verdict; everything it
prints is treated by the grader as hostile data (see ``collect.py``).
Kept free of attn imports: the notebook may have patched attn. ``is_stub`` is the text of
``attn/grading/stub.py``, sent ahead of this file (the same test as ``attn.grading.run.is_stub``).

``_attn_listen`` runs first, before the learner's cells, while attn is still as installed. From then on every
``check`` the notebook makes (top-level or nested in an ``if``, a loop, a function, under another name,
``v.check``) records the answers it judges (given as arguments, ``check("B01", scores=S)``, or read from the
notebook's variables) and the variant's seed, and returns a neutral, truthy note instead of a verdict: nothing
judges in the learner's kernel, so no ``check`` can be used there as an oracle, and ``fb = check(...)`` still binds
``fb``.
The last cell hands over the variables as they end and, item by item, the answer each part had when that item was
last checked; the grader counts a part right if either is (B01 checked, then its variables reused for B04; an
answer corrected, or changed in place, after its check).
"""

RECORD = "_attn_checked"  # the learner's namespace holds the record, like their variables
MAX_SEEDS = 16
RECORDED = ("Recorded for the teacher's grader",
            "This notebook is being graded: check() keeps your answers for the grader and judges nothing here.")


def _attn_listen(ns):
    import copy

    try:
        from attn.grading import learner_api
        from attn.grading.feedback import Note
    except Exception:  # noqa: BLE001 - no attn in this kernel: nothing to listen to
        return
    missing = object()
    # by_item[item][name] = (when, the value judged, the variable's object then)
    record = {"by_item": {}, "when": 0, "seeds": [], "missing": missing}

    class Recorded(Note):
        """Truthy: ``assert check(...)`` and ``check(...) and check(...)`` go on as on a right answer; a loop that
        searches with check stops at its first try. It has a verdict's attributes (``status``, ``correct``,
        ``message``; iterable like a report of one), so code that reads them runs on."""

        status, correct, mistake, part = "recorded", True, None, ""

        def __bool__(self):
            return True

        def __iter__(self):
            return iter([self])

        def __len__(self):
            return 1

        @property
        def message(self):
            return self.text

        @property
        def feedbacks(self):
            return [self]

    def listen(item_id, seed, given, namespace):
        reply = Recorded(*RECORDED)
        reply.item = item_id
        record["when"] += 1
        if item_id not in record["by_item"] and len(record["by_item"]) >= 64:
            return reply
        entry = record["by_item"].setdefault(item_id, {})
        for name, value in given.items():
            try:  # what check judged then, even if the notebook later changes the object in place
                value = copy.deepcopy(value)
            except Exception:  # noqa: BLE001 - an object that cannot be copied is handed over as it is
                pass
            entry[name] = (record["when"], value, ns.get(name, missing))
        if seed is not None:
            if [item_id, seed] in record["seeds"]:
                record["seeds"].remove([item_id, seed])
            if len(record["seeds"]) < MAX_SEEDS:
                record["seeds"].append([item_id, seed])  # most recently checked last
        return reply

    learner_api.answer_listeners.append(listen)
    ns[RECORD] = record


def _answers_given(ns, items):
    """``(values, by_item, seeds)``: the learner's variables; for each item of ``items`` ({item: [part names]}) the
    answers its own last check recorded (the grader counts a part right if either is); and the variants' seeds the
    checks used, most recently checked last."""
    record = ns.get(RECORD)
    if not (isinstance(record, dict) and isinstance(record.get("by_item"), dict)):
        return ns, {}, []
    by_item = {}
    for item_id, names in items.items():
        entry = record["by_item"].get(item_id)
        if not isinstance(entry, dict):
            continue
        for name in names:
            got = entry.get(name)
            if isinstance(got, tuple) and len(got) == 3:
                by_item.setdefault(item_id, {})[name] = got[1]
    seeds = record.get("seeds")
    return ns, by_item, [s for s in seeds if isinstance(s, list)] if isinstance(seeds, list) else []


def _attn_collect(ns, request):
    import copy
    import json
    import os
    import select
    import signal
    import sys
    import time
    import traceback
    import warnings

    import numpy as np

    limits = request["limits"]

    def enc(v, depth=0):
        if v is None or isinstance(v, bool):
            return v
        if isinstance(v, str):
            return v[: limits["str"]]
        if v is Ellipsis:
            return {"$": "ellipsis"}
        if isinstance(v, int):
            return v if abs(v) < 2**63 else {"$": "object", "type": "int", "text": str(v)[:40]}
        if isinstance(v, float):
            return v
        if isinstance(v, (np.ndarray, np.generic)) and np.asarray(v).dtype.kind in "biuf":
            a = np.asarray(v)
            if a.size > limits["elements"]:
                return {"$": "object", "type": "ndarray", "text": f"an array of shape {a.shape} (too large to grade)"}
            return {"$": "array", "dtype": a.dtype.str, "shape": list(a.shape),
                    "data": a.astype(np.float64 if a.dtype.kind == "f" else a.dtype).ravel().tolist()}
        if isinstance(v, np.ndarray) and v.dtype == object and 0 < v.size <= limits["elements"]:
            try:  # numbers as objects (Fraction, sympy Float): as floats, as check() reads them
                return enc(v.astype(np.float64), depth)
            except Exception:  # noqa: BLE001 - not all numbers: handed over as an object
                pass
        if isinstance(v, range):
            v = list(v)
        if isinstance(v, (list, tuple)) and depth < 6:
            if len(v) > limits["elements"]:
                return {"$": "object", "type": type(v).__name__, "text": f"a {type(v).__name__} of {len(v)} items"}
            return {"$": "list" if isinstance(v, list) else "tuple", "items": [enc(x, depth + 1) for x in v]}
        if callable(v):
            try:
                stub = bool(is_stub(v))  # noqa: F821 - defined by stub.py, sent ahead of this file
            except Exception:  # noqa: BLE001 - a hostile object: not a stub
                stub = False
            return {"$": "function", "name": str(getattr(v, "__name__", "function"))[:80], "stub": stub}
        try:  # array-likes (pandas, torch, np.matrix) and plain numbers (Fraction, Decimal), as NumPy reads them
            if hasattr(v, "__array__") or hasattr(v, "__array_interface__") or isinstance(v, (memoryview, bytearray)) \
                    or type(v).__module__ == "array":  # buffers NumPy reads, as check() reads them
                a = np.asarray(v)
                if a.dtype.kind in "biuf":
                    return enc(np.asarray(a), depth)
            elif hasattr(v, "__float__") and not isinstance(v, complex):
                return float(v)
        except Exception:  # noqa: BLE001 - whatever it is, it is handed over as an object
            pass
        return {"$": "object", "type": type(v).__name__[:80], "text": repr(v)[:200] if depth == 0 else ""}

    def dec(v):
        if isinstance(v, dict):
            kind = v.get("$")
            if kind == "array":
                return np.array(v["data"], dtype=np.dtype(v["dtype"])).reshape(v["shape"])
            if kind == "list":
                return [dec(x) for x in v["items"]]
            if kind == "tuple":
                return tuple(dec(x) for x in v["items"])
            if kind == "ellipsis":
                return Ellipsis
        return v

    def learner_line(exc):
        frames = traceback.extract_tb(exc.__traceback__)
        mine = [f for f in frames if f.filename.startswith("<") or "ipykernel" in f.filename]
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if mine:
            f = mine[-1]
            where = f" in `{f.name}`" if f.name not in ("<module>", "") else ""
            code = f": `{(f.line or '').strip()}`" if (f.line or "").strip() else ""
            return f"Your function raised {what[:300]}, at line {f.lineno}{where}{code[:200]}."
        return f"Your function raised {what[:300]}."

    class TimeUp(BaseException):
        pass

    def child(fn, cases, seconds, wfd):
        def ring(signum, frame):
            raise TimeUp()
        signal.signal(signal.SIGALRM, ring)
        for args in cases:
            out = {}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RuntimeWarning)
                signal.setitimer(signal.ITIMER_REAL, seconds)
                try:
                    out["value"] = fn(*copy.deepcopy(args))
                except TimeUp:
                    out = {"timed_out": True}
                except BaseException as exc:  # the learner's SystemExit too
                    out = {"error": learner_line(exc)}
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            out["warnings"] = sorted({str(w.message)[:200] for w in caught if issubclass(w.category, RuntimeWarning)})
            if "value" in out:
                out["value"] = enc(out["value"])
            line = json.dumps(out, allow_nan=True)
            if len(line) > limits["bytes"]:
                line = json.dumps({"error": "Your function returned something too large to send to the grader."})
            os.write(wfd, (line + "\n").encode())
            if "timed_out" in out:
                break

    def run_function(fn, cases, seconds):
        """One outcome dict per case, in a forked child killed if it overruns (a swallowed alarm costs this part only)."""
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            try:  # the function's own printing goes nowhere: only its outputs come back
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
                sys.stdout = sys.stderr = open(os.devnull, "w")
            except OSError:
                pass
            try:
                child(fn, cases, seconds, wfd)
            finally:
                os._exit(0)
        os.close(wfd)
        buf, outs = b"", []
        deadline = time.monotonic() + seconds + 1.0
        try:
            while len(outs) < len(cases):
                left = deadline - time.monotonic()
                if left <= 0:
                    outs.append({"timed_out": True})
                    break
                ready, _, _ = select.select([rfd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(rfd, 1 << 16)
                if not chunk:
                    if len(outs) < len(cases):
                        outs.append({"error": "Your function ended the process it ran in (os._exit or a crash)."})
                    break
                buf += chunk
                if len(buf) > limits["bytes"] * 2:
                    outs.append({"error": "Your function printed or returned too much."})
                    break
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    outs.append(json.loads(line))
                    deadline = time.monotonic() + seconds + 1.0
                    if "timed_out" in outs[-1]:
                        break
                if outs and "timed_out" in outs[-1]:
                    break
        finally:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            os.close(rfd)
        return outs

    ns, by_item, checked_seeds = _answers_given(ns, request.get("items", {}))
    result = {"values": {}, "by_item": {}, "functions": {}, "variants": [], "checked": []}
    for name in request["names"]:
        if name in ns:
            result["values"][name] = enc(ns[name])
    for item_id, answers in by_item.items():
        result["by_item"][str(item_id)[:8]] = {name: enc(v) for name, v in answers.items()}
    for name, job in request["functions"].items():
        fn = ns.get(name)
        for answers in by_item.values():  # the function as its item's check judged it
            fn = answers.get(name, fn)
        handed = enc(fn) if callable(fn) else result["values"].get(name)
        if callable(fn) and not (isinstance(handed, dict) and handed.get("stub")):
            result["functions"][name] = run_function(fn, [dec(c) for c in job["cases"]], job["seconds"])
    for value in list(ns.values()):
        if type(value).__name__ == "Variant":
            item, seed = getattr(value, "item_id", None), getattr(value, "seed", None)
            if isinstance(item, str) and isinstance(seed, int):
                result["variants"].append([item[:8], seed])
    for item, seed in (s for s in checked_seeds[:MAX_SEEDS] if len(s) == 2):
        if isinstance(item, str) and isinstance(seed, int):
            result["checked"].append([item[:8], seed])
    text = json.dumps(result, allow_nan=True)
    if len(text) > limits["total"]:
        text = json.dumps({"error": "the answers are too large to hand over"})
    sys.stdout.write("\n" + request["nonce"] + text + "\n")
    sys.stdout.flush()
