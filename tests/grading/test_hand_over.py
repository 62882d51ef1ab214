"""The grader's last cell (collect.cell_source) run in a plain namespace standing for the learner's kernel:
names a careless learner defines must not stop the hand-over; it is parsed and judged as the grader does."""
import contextlib
import io
import re

import numpy as np
import pytest

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


# ----------------------------------------------------------------------------- answers given to check as arguments
def run_like_the_grader(cells: list[str], spec: dict) -> tuple[dict, dict]:
    """``(judged, hand-over)``: the grader's first cell, the learner's cells as the grader runs them (as they are:
    every check records and judges nothing), then the last cell, all in one plain namespace standing for the
    kernel."""
    from attn.grading import learner_api

    listeners = list(learner_api.answer_listeners)
    ns: dict = {}
    try:
        exec(compile(collect.prelude_source(), "<prelude>", "exec"), ns)
        for cell in cells:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell, "<cell>", "exec"), ns)
        names, functions = set(), {}
        for item_id, seed in spec.items():
            item = get_item(item_id)
            for part in item.parts:
                names.add(part.name)
                if part.kind == "function":
                    functions[part.name] = {"cases": item.cases(part.name, seed), "seconds": part.seconds}
        req = collect.request(names, functions, items={i: get_item(i).part_names for i in spec})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(collect.cell_source(req), "<cell>", "exec"), ns)
    finally:
        learner_api.answer_listeners[:] = listeners
    data = collect.parse(out.getvalue(), req["nonce"])
    assert data is not None and isinstance(data.get("values"), dict), out.getvalue()[:500]
    return collect.judge_items(spec, data), data


B01_GIVENS = ("import numpy as np, attn, contextlib\n"
              "Q = np.array([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 1, 1]])\n"
              "K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [2, 0, 0, 0]])\n"
              "V = np.array([[1, 0], [0, 2], [2, 1]])\n"
              "S = Q @ K.T / 2\nW = attn.softmax(S)\n")

NESTED_FORMS = {  # each judges S, W and W @ V in the notebook (the learner sees ✓✓✓), never assigning the variables
    "if": 'from attn.grading import check\nif check("B01", scores=S):\n    print("yes")\n'
          'if not check("B01", "weights", W): pass\nelse:\n    ok = check("B01", output=W @ V)\n',
    "loop": 'from attn.grading import check\nfor mine in (S,):\n    if check("B01", scores=mine):\n'
            '        pass\nfor name, value in [("weights", W), ("output", W @ V)]:\n    check("B01", name, value)\n',
    "function": 'from attn.grading import check\ndef mine(s, w):\n    return check("B01", scores=s, weights=w)\n'
                'mine(S, W)\nlambda_check = (lambda o: check("B01", "output", o))\nlambda_check(W @ V)\n',
    "with": 'from attn.grading import check\nwith contextlib.nullcontext():\n    check("B01", scores=S)\n'
            'try:\n    check("B01", weights=W)\nfinally:\n    pass\nwhile not check("B01", output=W @ V):\n    break\n',
    "expression": 'from attn.grading import check\nok = bool(check("B01", scores=S)) and check("B01", weights=W)\n'
                  'results = [check("B01", output=W @ V)]\n',
    "alias": 'from attn.grading import check as c\nc("B01", scores=S)\nc2 = c\nc2("B01", "weights", W)\n'
             'from attn.grading.learner_api import check as c3\nx = c3("B01", output=W @ V)\n',
    "module": 'import attn.grading as g\ng.check("B01", scores=S)\nif g.check("B01", weights=W): pass\n'
              'attn.grading.check("B01", "output", W @ V)\n',
}


@pytest.mark.parametrize("form", sorted(NESTED_FORMS))
def test_answers_given_to_a_nested_or_renamed_check_are_judged_as_check_judged_them(form):
    # every check runs in the kernel, where it records the answers it judges (and judges nothing): handed over as
    # data and judged here
    judged, _ = run_like_the_grader([B01_GIVENS, NESTED_FORMS[form]], {"B01": None})
    assert [p["status"] for p in judged["B01"]["parts"]] == ["correct"] * 3, (form, judged)


def test_in_the_graders_kernel_check_is_no_oracle():
    """A search with check (``for guess in ...: if check(...): break``) gets a truthy note at its first try and
    stops there; ``fb = check(...)`` binds a note that says the answers were recorded."""
    from attn.grading import learner_api
    from attn.grading.runner.kernel_side import RECORDED

    search = ('from attn.grading import check\nfor guess in (S * 0, S):\n    if check("B01", scores=guess):\n'
              '        break\nscores = guess\n')
    judged, _ = run_like_the_grader([B01_GIVENS, search], {"B01": None})
    assert judged["B01"]["parts"][0]["status"] == "not yet"  # S * 0, the first try
    listeners, ns = list(learner_api.answer_listeners), {}
    try:
        exec(compile(collect.prelude_source(), "<prelude>", "exec"), ns)
        exec("from attn.grading import check\nscores = 1\nfb = check('B01', 'scores')", ns)
    finally:
        learner_api.answer_listeners[:] = listeners
    assert bool(ns["fb"]) and str(ns["fb"]).startswith(RECORDED[0])
    fb = ns["fb"]  # a verdict's attributes, so code that reads them runs on
    assert (fb.status, fb.correct, fb.item, list(fb), fb.message) == ("recorded", True, "B01", [fb], RECORDED[1])


def test_the_request_reaches_the_kernel_as_code_no_library_decodes(monkeypatch):
    """A hook on the kernel's JSON decoder once read the grader's request, secret and all, and forged the hand-over:
    the request is now Python source the kernel compiles, so no decoder of the notebook's sees it."""
    import builtins
    import json

    seen: list = []
    monkeypatch.setattr(builtins, "_attn_test_seen", seen, raising=False)
    monkeypatch.setattr(json, "_default_decoder", json.JSONDecoder())  # restored after the test
    hook = ("import json\n"
            "json._default_decoder.__init__(object_hook=lambda d: (_attn_test_seen.append(d), d)[1])\n")
    judged, _ = run_like_the_grader([B01_GIVENS, hook + "json.loads('{\"probe\": 1}')\nscores = S\n"],
                                    {"B01": None})
    # the hook works, and never saw the request (here the grader's own parse of the hand-over runs in this process
    # too, so the hook sees that; in attn-grade the parse is in the grader's process, out of the kernel's reach)
    assert seen[0] == {"probe": 1} and not any("nonce" in d for d in seen)
    assert judged["B01"]["parts"][0]["status"] == "correct"
    req = collect.request({"x"}, {"f": {"cases": [(np.array([np.inf, -np.inf, np.nan, 1.5]),)], "seconds": 1.0}})
    back = eval(collect.literal(req), {"_attn_b": builtins})  # noqa: S307 - the grader's own text
    data_back = back["functions"]["f"]["cases"][0]["items"][0]["data"]
    assert data_back[:2] == [np.inf, -np.inf] and np.isnan(data_back[2]) and back["nonce"] == req["nonce"]


def test_the_items_a_renamed_check_names_are_graded():
    import nbformat

    from attn.grading.runner.notebook import items_in, seeds_in

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        'from attn.grading import check as c, variant as draw\nc2 = c\nif c2("B03", mask=M): pass\n'
        'v = draw("V02", 5)\nc("II.3.V01", "weights", W, seed=4)\nfrom attn.grading import hint as h\nh("E05")'),
        nbformat.v4.new_code_cell('for x in xs:\n    c("E06", flops=x)')])  # a name made in an earlier cell
    assert items_in(nb) == {"B03": None, "V02": 5, "V01": 4, "E05": None, "E06": None}
    assert seeds_in(nb) == {"V02": [5], "V01": [4]}


def test_a_part_is_right_if_the_answer_its_check_saw_or_the_variable_at_the_end_is():
    """Both are the learner's own answers: the one their last check of the item saw, and the variable as the
    notebook ends (reused for another item since, or corrected, or changed in place). Neither alone is wrong."""
    e = get_item("B01").expected()
    wrong, right = e["scores"] * 2, e["scores"]
    ns_cell = "import numpy as np\nfrom attn.grading import check\n"
    # the variable assigned after the check: the checked answer counts
    judged, _ = run_like_the_grader([ns_cell + f"if check('B01', scores=np.array({right.tolist()})): pass\n"
                                     f"scores = np.array({wrong.tolist()})"], {"B01": None})
    assert judged["B01"]["parts"][0]["status"] == "correct"
    # both wrong: wrong
    judged, _ = run_like_the_grader([ns_cell + f"if check('B01', scores=np.array({wrong.tolist()})): pass\n"
                                     f"scores = np.array({(wrong + 1).tolist()})"], {"B01": None})
    assert judged["B01"]["parts"][0]["status"] == "not yet"
    # checked wrong, then corrected without a check: the variable counts
    judged, _ = run_like_the_grader([ns_cell + f"scores = np.array({wrong.tolist()})\ncheck('B01', 'scores')\n"
                                     f"scores = np.array({right.tolist()})"], {"B01": None})
    assert judged["B01"]["parts"][0]["status"] == "correct"
    # the check after the variable: what check was given is the answer
    judged, _ = run_like_the_grader([ns_cell + f"scores = np.array({wrong.tolist()})\n"
                                     f"if check('B01', scores=np.array({right.tolist()})): pass"], {"B01": None})
    assert judged["B01"]["parts"][0]["status"] == "correct"
    # changed in place after the check: check judged the copy it was given
    judged, _ = run_like_the_grader([ns_cell + f"s = np.array({right.tolist()})\n"
                                     "if check('B01', scores=s): s *= 2"], {"B01": None})
    assert judged["B01"]["parts"][0]["status"] == "correct"


def test_a_check_of_the_variable_after_an_experiment_given_to_check_judges_the_variable():
    """scores = right; check(scores=experiment) ✗; check('B01', 'scores') ✓: the learner last saw ✓ on their
    variable, so the grader judges the variable, not the earlier experiment."""
    e = get_item("B01").expected()
    wrong, right = e["scores"] * 2, e["scores"]
    cell = ("import numpy as np\nfrom attn.grading import check\n"
            f"scores = np.array({right.tolist()})\n"
            f"if check('B01', scores=np.array({wrong.tolist()})): pass\n")
    for recheck in ("if check('B01', 'scores'): pass\n", "if check('B01'): pass\n"):
        judged, _ = run_like_the_grader([cell + recheck], {"B01": None})
        assert judged["B01"]["parts"][0]["status"] == "correct", (recheck, judged)


def test_a_function_and_a_variant_given_to_a_nested_check_are_judged_with_their_seed():
    fn = ("import numpy as np\nfrom attn.grading import check\ndef mine(x, tau=1.0):\n"
          "    z = np.asarray(x, dtype=float) / tau\n    w = np.exp(z - z.max(axis=-1, keepdims=True))\n"
          "    return w / w.sum(axis=-1, keepdims=True)\nif check('E01', mine): pass\n")
    judged, _ = run_like_the_grader([fn], {"E01": None})
    assert judged["E01"]["parts"][0]["status"] == "correct", judged
    e = get_item("V01").expected(3)
    cells = ["import numpy as np\nfrom attn.grading import variant, check\nv = variant('V01', 3)\n"
             f"W = np.array({e['weights'].tolist()})\nif v.check(weights=W): pass\n"
             f"for s in [3]:\n    check('V01', scores=np.array({e['scores'].tolist()}), seed=s)\n"]
    judged, data = run_like_the_grader(cells, {"V01": 3})
    assert [p["status"] for p in judged["V01"]["parts"]] == ["correct", "correct", "not tried"], judged
    assert ["V01", 3] in data["variants"]
