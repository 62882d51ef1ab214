"""The auto-grader: right answers pass, each typical mistake gets its own hint, junk never raises."""
import math
import os
import re
from pathlib import Path

import jupytext
import numpy as np
import pytest

os.environ["ATTN_GRADING_STRICT"] = "1"  # a bug in the checker must fail the tests, not become a Note

from attn.grading import (  # noqa: E402
    CORRECT, NOT_TRIED, NOT_YET, Feedback, Note, Report, check, get_item, hint, items, variant,
)
from attn.grading import learner  # noqa: E402
from attn.grading.items import _hints_shown  # noqa: E402
from routes import for_every_seed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- independent references
def softmax_rows(S):
    """Written differently from attn.softmax: explicit loops over rows, math.exp."""
    out = np.zeros_like(S, dtype=float)
    for i, row in enumerate(S):
        finite = [x for x in row if x != -math.inf]
        m = max(finite)
        e = [0.0 if x == -math.inf else math.exp(x - m) for x in row]
        out[i] = [x / sum(e) for x in e]
    return out


def b01_by_hand():
    """B01 by hand, as the solution explains it (d_k = 4, so divide by 2)."""
    S = np.array([[0.5, 0.5, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    W = softmax_rows(S)
    V = np.array([[1, 0], [0, 2], [2, 1]], dtype=float)
    return {"scores": S, "weights": W, "output": W @ V}


# ----------------------------------------------------------------------------- the hint table
# (item, part, how to make the wrong answer from Q, K, V and the right answers, expected mistake key)
def _sm(S, axis=-1):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


HINT_TABLE = [
    ("B01", "scores", lambda d, e: d.Q @ d.K.T, "forgot_scale"),
    ("B01", "scores", lambda d, e: d.Q @ d.K.T / 4, "divided_by_dk"),
    ("B01", "scores", lambda d, e: d.K @ d.Q.T / 2, "k_qt"),
    ("B01", "scores", lambda d, e: -e["scores"], "sign"),
    ("B01", "scores", lambda d, e: e["scores"][:, :2], "shape"),
    ("B01", "weights", lambda d, e: _sm(e["scores"], axis=0), "columns"),
    ("B01", "weights", lambda d, e: _sm(d.Q @ d.K.T), "forgot_scale"),
    ("B01", "weights", lambda d, e: _sm(d.Q @ d.K.T / 4), "divided_by_dk"),
    ("B01", "weights", lambda d, e: _sm(d.K @ d.Q.T / 2), "k_qt"),
    ("B01", "weights", lambda d, e: e["weights"].T, "weights_t"),
    ("B01", "weights", lambda d, e: e["scores"], "scores_not_weights"),
    ("B01", "weights", lambda d, e: e["scores"] / e["scores"].sum(axis=1, keepdims=True), "no_exp"),
    ("B01", "weights", lambda d, e: np.round(e["weights"], 1), "rounding"),
    ("B01", "weights", lambda d, e: e["weights"] * 1.2, "rows_sum"),
    ("B01", "weights", lambda d, e: e["weights"].ravel(), "shape"),
    ("B01", "output", lambda d, e: e["weights"].T @ d.V, "weights_t"),
    ("B01", "output", lambda d, e: _sm(e["scores"], axis=0) @ d.V, "columns"),
    ("B01", "output", lambda d, e: _sm(d.Q @ d.K.T) @ d.V, "forgot_scale"),
    ("B01", "output", lambda d, e: _sm(d.Q @ d.K.T / 4) @ d.V, "divided_by_dk"),
    ("B01", "output", lambda d, e: e["scores"] @ d.V, "scores_times_v"),
    ("B01", "output", lambda d, e: e["output"].T, "shape"),
    ("B01", "output", lambda d, e: np.round(e["output"], 1), "rounding"),  # to 0 decimals it is V's plain average (s5-f4 G3)
    ("B01", "output", lambda d, e: e["output"] * 2, "factor"),
    # B02: one row of scores s at three temperatures
    ("B02", "weights", lambda d, e: np.stack([_sm(d.s * t) for t in d.taus]), "times_tau|order"),
    ("B02", "weights", lambda d, e: e["weights"][::-1], "times_tau|order"),  # taus 0.5, 1, 2: the same array
    ("V02@5", "weights", lambda d, e: e["weights"][::-1], "order"),  # taus 0.5, 2, 4: told apart
    ("V02@5", "weights", lambda d, e: np.stack([_sm(d.s * t) for t in d.taus]), "times_tau"),
    ("B02", "weights", lambda d, e: np.stack([_sm(d.s)] * 3), "no_tau"),
    ("B02", "weights", lambda d, e: _sm(np.stack([d.s / t for t in d.taus]), axis=0), "columns"),
    ("B02", "weights", lambda d, e: np.stack([(d.s / t) / (d.s / t).sum() for t in d.taus]), "no_exp"),
    ("B02", "weights", lambda d, e: np.round(e["weights"], 1), "rounding"),
    ("B02", "weights", lambda d, e: e["weights"][:2], "shape"),
    ("B02", "cold_limit", lambda d, e: [1 / 3] * 3, "uniform"),
    ("B02", "cold_limit", lambda d, e: [0, 0, 1], "argmin"),
    ("V02@7", "cold_limit", lambda d, e: [1, 0, 0], "first_key"),  # s = (2, 1, 4): B02's answer copied
    ("B02", "cold_limit", lambda d, e: [[1, 0, 0], [1, 0, 0]], "shape"),
    # B03: causal mask on four tokens, scores S given
    ("B03", "mask", lambda d, e: ~np.tril(np.ones((4, 4), bool)), "polarity"),
    ("B03", "mask", lambda d, e: np.tril(np.ones((4, 4), bool), -1), "strict"),
    ("B03", "mask", lambda d, e: np.triu(np.ones((4, 4), bool)), "future"),
    ("B03", "mask", lambda d, e: np.tril(np.ones((4, 4), bool), 1), "shifted_up"),
    ("B03", "mask", lambda d, e: np.ones((4, 4), bool), "value"),
    ("B03", "mask", lambda d, e: np.tril(np.ones((3, 3), bool)), "shape"),
    ("B03", "weights", lambda d, e: _sm(d.S), "no_mask"),
    ("B03", "weights", lambda d, e: np.tril(_sm(d.S)), "mask_after"),
    ("B03", "weights", lambda d, e: _sm(np.where(np.tril(np.ones((4, 4), bool)), d.S, 0)), "zero_not_inf"),
    ("B03", "weights", lambda d, e: e["weights"].T, "weights_t"),
    ("B03", "weights", lambda d, e: softmax_rows(np.where(np.tril(np.ones((4, 4), bool), -1) | (np.eye(4) * np.eye(4)[0]
                                                           ).astype(bool), d.S, -math.inf)), "strict"),
    ("B03", "weights", lambda d, e: _sm(e["weights"], axis=0) * 0 + e["weights"] / e["weights"].sum(0), "columns"),
    ("B03", "output", lambda d, e: _sm(d.S) @ d.V, "no_mask"),
    ("B03", "output", lambda d, e: np.tril(_sm(d.S)) @ d.V, "mask_after"),
    ("B03", "output", lambda d, e: e["weights"].T @ d.V, "weights_t"),
    ("B03", "output", lambda d, e: _sm(np.where(np.tril(np.ones((4, 4), bool)), d.S, 0)) @ d.V, "zero_not_inf"),
    # B04: cross-attention, T_q = 2 queries, T_k = 3 keys, d_k = 4
    ("B04", "scores", lambda d, e: d.Q @ d.K.T, "forgot_scale"),
    ("B04", "scores", lambda d, e: d.Q @ d.K.T / 4, "divided_by_dk"),
    ("B04", "scores", lambda d, e: d.K @ d.Q.T / 2, "k_qt"),  # shape (3, 2): the mistake, not just "shape"
    ("B04", "scores", lambda d, e: np.zeros((3, 3)), "shape"),
    ("B04", "weights", lambda d, e: _sm(e["scores"], axis=0), "columns"),
    ("B04", "weights", lambda d, e: _sm(d.Q @ d.K.T), "forgot_scale"),
    ("B04", "weights", lambda d, e: _sm(d.Q @ d.K.T / 4), "divided_by_dk"),
    ("B04", "weights", lambda d, e: _sm(d.K @ d.Q.T / 2), "k_qt"),
    ("B04", "weights", lambda d, e: e["weights"].T, "weights_t"),
    ("B04", "weights", lambda d, e: e["scores"], "scores_not_weights"),
    ("B04", "weights", lambda d, e: e["scores"] / e["scores"].sum(axis=1, keepdims=True), "no_exp"),
    ("B04", "output", lambda d, e: _sm(e["scores"], axis=0) @ d.V, "columns"),
    ("B04", "output", lambda d, e: _sm(d.Q @ d.K.T) @ d.V, "forgot_scale"),
    ("B04", "output", lambda d, e: _sm(d.Q @ d.K.T / 4) @ d.V, "divided_by_dk"),
    ("B04", "output", lambda d, e: e["scores"] @ d.V, "scores_times_v"),
    # weights without the exponential, each score over its row sum (reader s5: V04's own stream drew numbers where
    # this output passed, so the item declares it and its variant never draws such numbers)
    ("B04", "output", lambda d, e: np.round(e["scores"] / e["scores"].sum(axis=1, keepdims=True), 2) @ d.V, "no_exp"),
    ("B04", "output", lambda d, e: np.zeros((3, 2)), "shape"),
    # B05: d_k = 16, Var(q_i) = 1, Var(k_i) = 4
    ("B05", "var_raw", lambda d, e: 8.0, "std"),
    ("B05", "var_raw", lambda d, e: 4.0, "one_term"),
    ("B05", "var_raw", lambda d, e: 80.0, "sum_not_product"),
    ("B05", "var_raw", lambda d, e: 16.0, "unit_variances"),  # d_k alone
    ("B05", "var_raw", lambda d, e: 32.0, "std_not_var"),  # d_k σ_q σ_k = 16 · 1 · 2
    ("B05", "var_raw", lambda d, e: 256.0, "variance_as_scale"),  # d_k var_q² var_k² = 16 · 1 · 16
    ("B05", "var_raw", lambda d, e: -64.0, "sign"),
    ("B05", "var_raw", lambda d, e: 60.0, "value"),
    ("B05", "var_raw", lambda d, e: [64.0, 1.0], "shape"),
    ("B05", "var_scaled", lambda d, e: 16.0, "scaled_by_sqrt"),
    ("B05", "var_scaled", lambda d, e: 0.25, "scaled_twice"),
    ("B05", "var_scaled", lambda d, e: 2.0, "std"),
    ("B05", "var_scaled", lambda d, e: 64.0, "unscaled"),
    ("B05", "var_scaled", lambda d, e: 1.0, "always_one"),
    ("B05", "simulated", lambda d, e: 8.1, "std"),
    ("B05", "simulated", lambda d, e: 3.9, "scaled"),
    ("B05", "simulated", lambda d, e: 262.0, "variance_as_scale"),  # normal(0, 4) where 4 is the variance
]

# Mistakes that cannot arise for an item's numbers (the wrong product does not even have a valid shape).
NOT_APPLICABLE = {("B04", "output", "weights_t")}


@pytest.mark.parametrize("item_id, part, make, key", HINT_TABLE,
                         ids=[f"{r[0]}-{r[1]}-{r[3]}" for r in HINT_TABLE])
def test_hint_table(item_id, part, make, key):
    item_id, _, seed = item_id.partition("@")
    seed = int(seed) if seed else None
    it = get_item(item_id)
    d = it.context(seed)
    wrong = make(d, it.expected(seed))
    fb = it.judge(part, wrong, seed)
    assert fb.status == NOT_YET and fb.mistake == key, str(fb)
    declared = {m.key: m.hint for m in it.part(part).mistakes}
    if key in declared:
        assert fb.message == declared[key]  # the hint written for that mistake, word for word


def test_every_declared_mistake_has_a_row_in_the_table():
    # exercises (E..) keep their own table in tests/grading/test_exercises.py
    declared = {(it.id, p.name, m.key) for it in items() if it.kind == "problem" for p in it.parts for m in p.mistakes}
    tabled = {(i.partition("@")[0].replace("V", "B"), p, k) for i, p, _, k in HINT_TABLE}
    assert declared - NOT_APPLICABLE <= tabled, sorted(declared - tabled)


def _assert_mistakes_recognised(it, seed=None):
    """Every declared wrong answer is diagnosed as itself, or as an earlier mistake with the same value.

    Mistakes that cannot be computed for the data (a shape that does not fit) or that give NaN/inf
    (which a learner's answer is told about directly) are skipped.
    """
    ns = it.context(seed)
    for p in it.parts:
        values = {}
        for m in p.mistakes:
            try:
                with np.errstate(all="ignore"):
                    values[m.key] = np.asarray(m.answer(ns))
            except ValueError:
                continue
        for key, wrong in values.items():
            if wrong.dtype != bool and not np.isfinite(wrong).all():
                continue
            fb = it.judge(p.name, wrong, seed)
            assert fb.status == NOT_YET, (it.id, seed, p.name, key, str(fb))
            named = fb.mistake.split("|")  # two mistakes with the same array here are both named
            twins = [values.get(k) for k in named]
            assert key in named or any(t is not None and np.allclose(t, wrong, atol=0.02) for t in twins), (
                it.id, seed, p.name, key, fb.mistake)


@pytest.mark.parametrize("item_id", [it.id for it in items() if it.kind == "problem"])  # E..: test_exercises.py
def test_declared_mistakes_are_recognised_and_distinct(item_id):
    _assert_mistakes_recognised(get_item(item_id))


# ----------------------------------------------------------------------------- right answers
def test_b01_agrees_with_the_hand_computation():
    exp = get_item("B01").expected()
    for k, v in b01_by_hand().items():
        np.testing.assert_allclose(exp[k], v, atol=1e-12)


@pytest.mark.parametrize("form", ["exact", "rounded", "list", "float32", "int_scores"])
def test_b01_solved_answers_pass(form):
    sol = b01_by_hand()
    if form == "rounded":
        sol = {k: np.round(v, 2) for k, v in sol.items()}
    elif form == "list":
        sol = {k: np.round(v, 2).tolist() for k, v in sol.items()}
    elif form == "float32":
        sol = {k: v.astype(np.float32) for k, v in sol.items()}
    elif form == "int_scores":
        sol = {"scores": (b01_by_hand()["scores"] * 2).astype(int) / 2}
    report = check("B01", **sol)
    assert bool(report), str(report)


def test_two_decimal_parts_accept_rounding_either_way_but_not_far_off():
    it = get_item("B01")
    w = it.expected()["weights"]
    assert it.judge("weights", np.round(w, 2)).correct
    nudged = w.copy()
    nudged[:, 0] += 0.009  # one entry per row off by 0.009: within the tolerance, rows still sum to 1 ± 0.009
    assert it.judge("weights", nudged).correct
    assert not it.judge("weights", w + 0.009).correct  # every entry off: rows sum to 1.027, more than rounding
    assert not it.judge("weights", w + 0.02).correct


def test_check_reads_the_notebook_variable_by_name():
    scores = b01_by_hand()["scores"]  # noqa: F841 (read by check through the caller's globals? no: locals)
    globals()["weights"] = b01_by_hand()["weights"]
    try:
        assert check("B01", "weights").correct
    finally:
        del globals()["weights"]
    fb = check("B01", "output")
    assert fb.status == NOT_TRIED and "no variable `output`" in fb.message


# ----------------------------------------------------------------------------- junk never raises
JUNK = [
    ..., None, "0.5", b"x", [[1, 2], [3]], [[..., 1, 2]], float("nan"), np.full((3, 3), np.nan),
    np.full((3, 3), np.inf), np.zeros((3, 3), dtype=int), np.ones((3, 3), dtype=bool), [1, 2, 3], (1, 2),
    np.ones((3, 3, 1)), np.ones(9), 1j * np.ones((3, 3)), {"a": 1}, lambda x: x, object(), [[None] * 3] * 3,
    np.array(["a", "b", "c"]), np.empty((0, 3)), 0, -1e308, 1e308, [[]], np.ma.masked_all((3, 3)),
]


@pytest.mark.parametrize("junk", JUNK, ids=[type(j).__name__ + str(i) for i, j in enumerate(JUNK)])
@pytest.mark.parametrize("part", ["scores", "weights", "output"])
def test_junk_is_feedback_never_an_exception(junk, part):
    fb = check("B01", **{part: junk})
    assert isinstance(fb, Feedback)
    assert fb.status in (NOT_TRIED, NOT_YET)
    assert fb.message and str(fb) and fb._repr_html_()
    if junk is Ellipsis:
        assert fb.status == NOT_TRIED


def test_entries_left_as_ellipsis_are_named():
    for partial in ([[0.5, ..., 1]] * 3, np.array([[0.5, ..., 1]] * 3, dtype=object)):
        fb = check("B01", scores=partial)
        assert fb.status == NOT_YET and fb.mistake == "partial"


def test_wrong_shape_names_both_shapes_and_no_broadcasting_hides_it():
    it = get_item("B01")
    w = it.expected()["weights"]
    for wrong in (w[0], w[:1], np.broadcast_to(w[0], (1, 3))):
        fb = it.judge("weights", wrong)
        assert fb.mistake == "shape" and str(np.shape(wrong)) in fb.message and "(3, 3)" in fb.message


def test_messages_never_print_the_expected_array():
    it = get_item("B01")
    exp = it.expected()
    numbers = {f"{x:.2f}" for v in exp.values() for x in np.ravel(v) if abs(x) not in (0.0, 0.5, 1.0, 2.0)}
    ns = it.context()
    answers = [m.answer(ns) for p in it.parts for m in p.mistakes] + JUNK + [np.zeros((3, 3))]
    for p in it.parts:
        for a in answers:
            msg = it.judge(p.name, a).message
            found = {n for n in numbers if n in msg}
            assert not found, (p.name, msg)
            assert "[[" not in msg


def test_feedback_renders_as_text_and_html():
    fb = get_item("B01").judge("scores", [[1, 2, 3], [4, 5, 6], [7, 8, "<b>"]])
    assert "<b>" not in fb._repr_html_()  # escaped
    assert repr(fb) == str(fb)
    rep = check("B01", scores=..., weights=...)
    assert isinstance(rep, Report) and len(rep) == 2 and not rep
    assert rep._repr_html_().count("attn-feedback") == 2
    assert "B01 weights" in str(rep)


def test_unknown_item_or_part_is_a_note():
    assert isinstance(check("Z99", scores=1), Note)
    note = check("B01", score=1)
    assert isinstance(note, Note) and "scores" in str(note)


# ----------------------------------------------------------------------------- hints
def test_hints_come_one_at_a_time():
    _hints_shown.pop("B01", None)
    n = len(get_item("B01").hints)
    seen = [str(hint("B01")) for _ in range(n)]
    assert [f"hint {i} of {n}" in s for i, s in enumerate(seen, 1)] == [True] * n
    assert "no more hints" in str(hint("B01"))
    assert "hint 2 of" in str(hint("B01", 2))
    assert "no hint" in str(hint("B01", 99))


# ----------------------------------------------------------------------------- pages and learner copies
def _page_cells(name):
    return jupytext.read(ROOT / "exercises" / f"{name}.md").cells


def test_b01_page_uses_the_items_numbers():
    src = next(c.source for c in _page_cells("b01-three-tokens") if c.cell_type == "code" and "Q = np.array" in c.source)
    ns = {"np": np}
    exec(src, ns)
    d = get_item("B01").context()
    for k in "QKV":
        np.testing.assert_array_equal(ns[k], getattr(d, k))


def test_learner_copies_are_in_sync():
    assert learner.main(["--root", str(ROOT), "--check"]) == 0, "run: .venv/bin/python -m attn.grading.learner"


@pytest.mark.parametrize("page", learner.pages(ROOT), ids=lambda p: p.stem)
def test_learner_copy_holds_no_solution(page):
    text = learner.copy_path(page, ROOT).read_text(encoding="utf-8")
    assert "{solution" not in text and "[solution" not in text and "_sol" not in text
    assert "record_progress()" in text
    cells = jupytext.reads(text, fmt="md:myst").cells
    answers = [c.source for c in cells if c.cell_type == "code"
               and re.match(r"^(\w+ = \.\.\.|def \w+\(.*\):\s*\n\s+\.\.\.)", c.source)]  # a value, or a function stub
    assert answers, "the learner copy must hold empty answer cells"


def test_book_pages_never_record_progress():
    # the learner copies add the recording cell (attn.grading.learner); building the book writes no progress file
    for page in learner.pages(ROOT):
        assert not [c for c in jupytext.read(page).cells if c.cell_type == "code" and "record_progress" in c.source]


def test_learner_copies_are_not_in_the_toc():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "exercises/learner" not in toc
    for page in learner.pages(ROOT):
        assert f"exercises/{page.stem}" in toc, page.stem


# ----------------------------------------------------------------------------- B02–B05 and the variants
def independent_answers(item_id, d):
    """Each item's answers, computed without attn: loops, math.exp, explicit formulas."""
    if item_id in ("B01", "V01", "B04", "V04"):
        Q, K, V = (np.asarray(x, dtype=float) for x in (d.Q, d.K, d.V))
        d_k = Q.shape[1]
        S = np.array([[sum(q * k for q, k in zip(Q[i], K[j])) / math.sqrt(d_k) for j in range(len(K))]
                      for i in range(len(Q))])
        W = softmax_rows(S)
        O = np.array([[sum(W[i, j] * V[j, c] for j in range(len(V))) for c in range(V.shape[1])]
                      for i in range(len(Q))])
        return {"scores": S, "weights": W, "output": O}
    if item_id in ("B02", "V02"):
        s = [float(x) for x in d.s]
        W = softmax_rows(np.array([[x / t for x in s] for t in d.taus]))
        top = max(s)
        return {"weights": W, "cold_limit": np.array([1.0 if x == top else 0.0 for x in s])}
    if item_id in ("B03", "V03"):
        T = len(d.S)
        M = np.array([[j <= i for j in range(T)] for i in range(T)])
        W = softmax_rows(np.array([[float(d.S[i][j]) if M[i, j] else -math.inf for j in range(T)] for i in range(T)]))
        return {"mask": M, "weights": W, "output": W @ np.asarray(d.V, dtype=float)}
    if item_id == "B05":
        var = d.d_k * d.var_q * d.var_k
        return {"var_raw": var, "var_scaled": var / d.d_k, "simulated": var}
    raise KeyError(item_id)


PROBLEMS = ["B01", "B02", "B03", "B04", "B05"]
VARIANTS = ["V01", "V02", "V03", "V04"]
SEEDS = range(40)


@pytest.mark.parametrize("item_id", PROBLEMS)
def test_problems_agree_with_an_independent_computation_and_solved_answers_pass(item_id):
    it = get_item(item_id)
    mine = independent_answers(item_id, it.context())
    for k, v in it.expected().items():
        np.testing.assert_allclose(np.asarray(v, dtype=float), np.asarray(mine[k], dtype=float), atol=1e-3)
    assert bool(check(item_id, **mine))
    rounded = {k: np.round(np.asarray(v, dtype=float), 2).tolist() for k, v in mine.items()}
    assert bool(check(item_id, **rounded)), str(check(item_id, **rounded))


@pytest.mark.parametrize("item_id", VARIANTS)
def test_variants_agree_with_an_independent_computation(item_id):
    it = get_item(item_id)
    for seed in SEEDS:
        mine = independent_answers(item_id, it.context(seed))
        for k, v in it.expected(seed).items():
            np.testing.assert_allclose(np.asarray(v, dtype=float), np.asarray(mine[k], dtype=float), atol=1e-3,
                                       err_msg=f"{item_id} seed {seed} {k}")
        rep = check(item_id, seed=seed, **{k: np.round(np.asarray(v, dtype=float), 2) for k, v in mine.items()})
        assert bool(rep), (seed, str(rep))


@pytest.mark.parametrize("item_id", VARIANTS)
def test_variants_are_reproducible_varied_and_pleasant(item_id):
    it = get_item(item_id)
    draws = []
    for seed in SEEDS:
        a = variant(item_id, seed)
        b = variant(item_id, seed)
        data = {k: v for k, v in vars(it.context(seed)).items() if k not in it.part_names}
        for k, v in data.items():
            assert np.array_equal(np.asarray(getattr(a, k)), np.asarray(getattr(b, k)))
            if isinstance(v, np.ndarray):
                assert np.issubdtype(v.dtype, np.integer) and np.abs(v).max() <= 4, (seed, k, v)
        draws.append(repr(data))
    assert len(set(draws)) == len(draws), "different seeds must give different numbers"
    # a fresh interpreter's draw does not depend on which seeds were drawn before
    fresh = it.data(np.random.default_rng([7, *it.stream] if it.stream else 7))  # V03, V04: a stream of their own
    for k, v in fresh.items():
        assert np.array_equal(np.asarray(v), np.asarray(getattr(it.context(7), k)))


@pytest.mark.parametrize("item_id", VARIANTS)
def test_variant_mistakes_are_recognised_for_every_seed(item_id):
    for_every_seed(item_id, SEEDS, _assert_mistakes_recognised)


def test_variant_display_and_bad_seeds():
    v = variant("V01", 3)
    text = str(v)
    assert text.startswith("V01 (seed 3)") and "Q = [[" in text and "V = [[" in text
    assert '<pre class="attn-variant">' in v._repr_html_()
    for bad in (-1, 1.5, "7", None, True):
        assert isinstance(variant("V01", bad), Note)
    assert isinstance(variant("B01", 3), Note)
    assert isinstance(check("V01", scores=1), Note)  # a variant needs its seed


def test_variant_check_reads_the_callers_variables():
    v = variant("V04", 5)
    mine = independent_answers("V04", get_item("V04").context(5))
    globals()["scores"] = mine["scores"]
    try:
        assert v.check("scores").correct
        assert v.check("weights").status == NOT_TRIED
    finally:
        del globals()["scores"]


@pytest.mark.parametrize("item_id", PROBLEMS + VARIANTS)
def test_junk_never_raises_for_any_part(item_id):
    it = get_item(item_id)
    seed = 1 if it.seeded else None
    for p in it.parts:
        for junk in JUNK:
            fb = it.judge(p.name, junk, seed)
            assert fb.status in (NOT_TRIED, NOT_YET) and fb.message


def test_masks_accept_booleans_and_zero_one_integers_only():
    it = get_item("B03")
    m = np.tril(np.ones((4, 4), dtype=int))
    assert it.judge("mask", m).correct and it.judge("mask", m.astype(bool).tolist()).correct
    assert it.judge("mask", m * 2).mistake == "type"


def test_b05_accepts_a_real_simulation():
    d = get_item("B05").context()
    rng = np.random.default_rng(1)
    q = rng.normal(0, math.sqrt(d.var_q), size=(20_000, d.d_k))
    k = rng.normal(0, math.sqrt(d.var_k), size=(20_000, d.d_k))
    assert check("B05", simulated=np.var((q * k).sum(axis=1))).correct
    assert check("B05", simulated=np.std((q * k).sum(axis=1))).mistake == "std"


GIVEN_NAMES = {"B01": "QKV", "B02": ("s", "taus"), "B03": ("S", "V"), "B04": "QKV", "B05": ("d_k", "var_q", "var_k")}
PAGES = {"B01": "b01-three-tokens", "B02": "b02-temperature", "B03": "b03-causal-mask", "B04": "b04-cross-attention",
         "B05": "b05-variance"}


@pytest.mark.parametrize("item_id", PROBLEMS)
def test_problem_pages_use_the_items_numbers(item_id):
    names = GIVEN_NAMES[item_id]
    cells = [c.source for c in _page_cells(PAGES[item_id]) if c.cell_type == "code"]
    src = next(c for c in cells if re.search(rf"^{re.escape(names[0])} = ", c, re.M))
    ns = {"np": np}
    exec(src, ns)
    d = get_item(item_id).context()
    for k in names:
        np.testing.assert_array_equal(np.asarray(ns[k]), np.asarray(getattr(d, k)))
    assert get_item(item_id).page == f"exercises/{PAGES[item_id]}"


@pytest.mark.parametrize("item_id", PROBLEMS + VARIANTS)
def test_every_item_has_a_page_in_the_toc_and_the_index(item_id):
    page = get_item(item_id).page
    assert (ROOT / f"{page}.md").exists()
    assert f"file: {page}\n" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
    label = page.split("/")[-1]
    assert f"{{ref}}`{label}`" in (ROOT / "exercises" / "index.md").read_text(encoding="utf-8")
    assert f"({label})=" in (ROOT / f"{page}.md").read_text(encoding="utf-8")


def test_importing_the_grader_loads_numpy_only():
    import subprocess
    import sys
    code = ("import sys, attn.grading; bad = [m for m in ('matplotlib', 'ipywidgets', 'IPython', 'jsonschema', "
            "'jupytext', 'nbformat') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_calls_without_an_item_are_feedback_not_errors():
    from attn.grading import check, hint
    for note in (check(), hint()):
        assert "Which item?" in str(note)


def test_transposed_output_message_and_singular_grammar():
    from attn.grading import check
    import attn
    Q = np.array([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 1, 1]])
    K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [2, 0, 0, 0]])
    V = np.array([[1, 0], [0, 2], [2, 1]])
    out = attn.attention(Q, K, V).output
    msg = str(check("B01", output=out.T))
    assert "one row per query" in msg and "columns are keys" not in msg
    wrong = out.copy()
    wrong[0, 0] += 1.0
    assert "1 of 6 entries is not right yet" in str(check("B01", output=wrong))


def test_progress_given_an_item_id_shows_the_table(tmp_path, monkeypatch):
    from attn.grading import progress
    monkeypatch.chdir(tmp_path)
    assert "II.3.B01" in str(progress("B01"))


def test_a_list_of_numbers_given_as_one_row_or_one_column_is_that_list():
    # (1, n) and (n, 1) hold the same n numbers in the same order as (n,): a right answer, not a shape mistake
    for item_id, name in (("B02", "cold_limit"), ("E07", "variances")):
        it = get_item(item_id)
        v = np.asarray(it.expected()[name])
        for form in (v.reshape(1, -1), v.reshape(-1, 1), [v.tolist()], v.reshape(1, 1, -1)):
            assert it.judge(name, form).status == CORRECT, (item_id, np.shape(form))
        wrong = v.reshape(1, -1) * 1.5 + 0.5  # off by far more than any tolerance
        assert it.judge(name, wrong).status == NOT_YET


def test_a_function_must_keep_the_shape_of_its_output():
    # the row/column leniency is for values typed as lists, not for what a function returns
    from attn.grading.run import Outcome
    it = get_item("E01")
    cases = it.cases("softmax")
    outs = []
    for args in cases:
        y = np.asarray(it.context().softmax(*args))
        outs.append(Outcome(value=y.reshape(1, -1) if y.ndim == 1 else y))
    assert any(np.ndim(it.context().softmax(*a)) == 1 for a in cases)
    assert it.judge_outcomes("softmax", outs).status == NOT_YET


def test_returning_the_output_and_the_weights_together_is_named_not_called_ragged_rows():
    # `return W @ V, W` (or `output = out, W`) makes a tuple of arrays: the message must say so, not that the
    # rows of the answer have different lengths
    def sdpa(Q, K, V, mask=None):
        S = np.asarray(Q, float) @ np.asarray(K, float).T / np.sqrt(np.shape(Q)[-1])
        if mask is not None:
            S = np.where(mask, S, -np.inf)
        W = np.exp(S - S.max(-1, keepdims=True))
        W /= W.sum(-1, keepdims=True)
        return W @ V, W
    fb = check("E02", scaled_dot_product_attention=sdpa)
    assert fb.status == NOT_YET and fb.mistake == "tuple", fb.message
    assert "tuple of 2" in fb.message and "(3, 2)" in fb.message and "different lengths" not in fb.message
    it = get_item("B01")
    e = it.expected()
    fb = it.judge("output", (e["output"], e["weights"]))
    assert fb.mistake == "tuple" and "different lengths" not in fb.message
    assert it.judge("weights", [[0.5, 0.5], [0.3, 0.3, 0.4], [1.0]]).mistake == "ragged"  # really ragged rows


def test_a_function_that_returns_float16_is_told_so_not_to_check_its_arithmetic():
    def softmax(x, tau=1.0):
        z = np.asarray(x, dtype=float) / tau
        w = np.exp(z - z.max(axis=-1, keepdims=True))
        return (w / w.sum(axis=-1, keepdims=True)).astype(np.float16)
    fb = check("E01", softmax=softmax)
    assert fb.status == NOT_YET and fb.mistake == "float16", fb.message
    assert "float16" in fb.message and "arithmetic" not in fb.message
