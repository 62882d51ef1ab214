"""The grader's last cell (collect.cell_source) run in a plain namespace standing for the learner's kernel:
names a careless learner defines must not stop the hand-over; it is parsed and judged as the grader does."""
import contextlib
import io
import re

import numpy as np

import attn
from attn.grading import get_item
from attn.grading.runner import collect


def hand_over(ns: dict, spec: dict) -> dict:
    """Run the last cell in ``ns`` (as the kernel would), then parse and judge its printed line."""
    names, functions = set(), {}
    for item_id in spec:
        item = get_item(item_id)
        for part in item.parts:
            names.add(part.name)
            if part.kind == "function":
                functions[part.name] = {"cases": item.cases(part.name), "seconds": part.seconds}
    req = collect.request(names, functions)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(collect.cell_source(req), "<cell>", "exec"), ns)
    data = collect.parse(out.getvalue(), req["nonce"])
    assert data is not None and isinstance(data.get("values"), dict), out.getvalue()[:500]
    return collect.judge_items(spec, data)


def _right_b01(ns):
    it = get_item("B01")
    ns.update(it.expected())
    return ns


def test_a_learner_who_star_imports_re_or_names_a_variable_exec_or_globals_is_still_graded():
    # `from re import *` brings re.compile; a variable may be called exec or globals: none is the builtin
    for shadow in ({"compile": re.compile}, {"exec": print}, {"globals": dict}, {"exec": 3, "compile": "x"}):
        ns = _right_b01(dict(shadow))
        judged = hand_over(ns, {"B01": None})
        assert [p["status"] for p in judged["B01"]["parts"]] == ["correct"] * 3, (shadow, judged)


class _CallableInt(int):
    def __call__(self, x, tau=1.0):
        return attn.softmax(np.asarray(x, dtype=float) / tau)


def test_a_function_answer_of_an_odd_type_costs_that_part_only():
    # a callable int (a hostile or odd object) once made the whole hand-over fail: every item "crashed"
    ns = _right_b01({"softmax": _CallableInt(5)})
    judged = hand_over(ns, {"B01": None, "E01": None})
    assert [p["status"] for p in judged["B01"]["parts"]] == ["correct"] * 3
    assert judged["E01"]["parts"][0]["status"] != "correct"


def test_buffers_numpy_reads_are_handed_over_as_the_numbers_they_hold():
    # check() in the notebook reads an array.array or a memoryview with np.asarray (correct); the teachers'
    # grader must not call the same answer junk
    import array
    v = np.asarray(get_item("E07").expected()["variances"])
    for form in (array.array("d", v), memoryview(v.copy()), array.array("f", v)):
        ns = {"variances": form, "slope": get_item("E07").expected()["slope"]}
        judged = hand_over(ns, {"E07": None})
        assert [p["status"] for p in judged["E07"]["parts"]] == ["correct", "correct"], (type(form), judged)


def test_an_object_array_of_numbers_is_handed_over_as_numbers():
    # np.array of Fractions (or of sympy Floats) has dtype object; check() reads it as floats (correct), so must
    # the teachers' grader, for a value and for what a function returns
    from fractions import Fraction

    e = get_item("B01").expected()
    ns = {k: np.array([[Fraction(x).limit_denominator(10**12) for x in row] for row in np.atleast_2d(v)],
                      dtype=object).reshape(np.shape(v)) for k, v in e.items()}

    def softmax(x, tau=1.0):
        z = np.asarray(x, dtype=float) / tau
        w = np.exp(z - z.max(axis=-1, keepdims=True))
        return np.array((w / w.sum(axis=-1, keepdims=True)).tolist(), dtype=object)

    ns["softmax"] = softmax
    judged = hand_over(ns, {"B01": None, "E01": None})
    assert [p["status"] for p in judged["B01"]["parts"]] == ["correct"] * 3, judged
    assert judged["E01"]["parts"][0]["status"] == "correct", judged


def test_a_float16_result_is_named_by_the_teachers_grader_too():
    def softmax(x, tau=1.0):
        z = np.asarray(x, dtype=float) / tau
        w = np.exp(z - z.max(axis=-1, keepdims=True))
        return (w / w.sum(axis=-1, keepdims=True)).astype(np.float16)
    part = hand_over({"softmax": softmax}, {"E01": None})["E01"]["parts"][0]
    assert (part["status"], part["mistake"]) == ("not yet", "float16"), part
