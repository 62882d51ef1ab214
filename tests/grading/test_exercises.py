"""Exercises E01–E10: right answers pass, every typical mistake gets its own hint, junk is feedback.

The wrong answers here are written independently of the mistakes declared in
attn.grading.exercises (a learner's code, not the checker's), so each row of the
hint table checks that a mistake a learner really makes is recognised.
"""
import math
import os
from pathlib import Path

import jupytext
import numpy as np
import pytest

os.environ["ATTN_GRADING_STRICT"] = "1"
os.environ["ATTN_PROGRESS"] = "off"

from attn.grading import CORRECT, NOT_TRIED, NOT_YET, Feedback, check, get_item, hint, items  # noqa: E402
from attn.grading.items import _hints_shown  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = [f"E{i:02d}" for i in range(1, 11)]


# ----------------------------------------------------------------------------- learners' functions, right and wrong
def sm(x, tau=1.0, axis=-1):
    z = np.asarray(x, dtype=float) / tau
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sm_unstable(x, tau=1.0):
    e = np.exp(np.asarray(x, dtype=float) / tau)
    return e / e.sum(axis=-1, keepdims=True)


def sdpa(Q, K, V, mask=None, scale=None, axis=-1, kt=True, wt=False, fill=-np.inf, polarity=True, after=False,
         shift=True):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ (K.T if kt else K)
    S = S / (math.sqrt(Q.shape[1]) if scale is None else scale)
    if mask is not None and not after:
        S = np.where(mask if polarity else ~np.asarray(mask), S, fill)
    if shift:
        S = S - S.max(axis=axis, keepdims=True)
    W = np.exp(S)
    W = W / W.sum(axis=axis, keepdims=True)
    if mask is not None and after:
        W = W * mask
    return (W.T if wt else W) @ V


def jac(x, tau=1.0, kind="right"):
    w = sm(x, tau)
    D, O = np.diag(w), np.outer(w, w)
    return {"right": (D - O) / tau, "sign": (O - D) / tau, "diag_only": D / tau,
            "no_off_diagonal": np.diag(w - w * w) / tau, "outer_only": -O / tau, "times_tau": (D - O) * tau,
            "no_tau": D - O}[kind]


def safe(Q, K, V, mask=None, fill=-np.inf, zero_empty=True, shift=True, keepdims=True):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ K.T / math.sqrt(Q.shape[1])
    mask = np.ones(S.shape, bool) if mask is None else np.asarray(mask)
    empty = ~mask.any(axis=1, keepdims=keepdims)  # keepdims=False: a (T_q,) vector, broadcast along the keys
    S = np.where(mask, S, fill)
    if zero_empty:
        S = np.where(empty, 0.0, S)
    with np.errstate(all="ignore"):
        if shift:
            S = S - S.max(axis=1, keepdims=True)
        W = np.exp(S)
        W = W / W.sum(axis=1, keepdims=True)
    if zero_empty:
        W = np.where(empty, 0.0, W)
    return W @ V


def band(T, lo, hi):
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return (i - j >= lo) & (i - j <= hi)


def pad(T=5, n=3):
    return np.broadcast_to(np.arange(T)[None, :] < n, (T, T)).copy()


def tau_for(s, target=0.9):
    lo, hi = 1e-3, 1e3
    for _ in range(100):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if sm(s, mid).max() > target else (lo, mid)
    return mid


def self_attn(Q, K, V):
    return sdpa(Q, K, V)


def loops_forever(*args, **kwargs):
    while True:
        pass


def forgot_return(x, tau=1.0):
    w = sm(x, tau)  # noqa: F841 (computed, never returned)


def raises_inside(x, tau=1.0):
    return np.exp(x) / undefined_name  # noqa: F821


# ----------------------------------------------------------------------------- the hint table
# (item, part, the learner's wrong answer built from the data d, expected mistake key)
P = [2, 0, 3, 1]
HINT_TABLE = [
    # E01 the softmax
    ("E01", "softmax", lambda d: sm_unstable, "unstable"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: sm(x, tau, axis=0)), "columns"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: np.exp(x / tau - np.max(x / tau)) / np.exp(x / tau - np.max(x / tau)).sum()),
     "global"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: sm(np.asarray(x) * tau)), "times_tau"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: (lambda z: z / z.sum(axis=-1, keepdims=True))(
        np.exp(np.asarray(x, dtype=float) / tau - np.max(np.asarray(x, dtype=float) / tau)))), "global_max"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: sm(x)), "no_tau"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: (x / tau) / (x / tau).sum(axis=-1, keepdims=True)), "no_exp"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: sm(-np.asarray(x), tau)), "sign"),
    ("E01", "softmax", lambda d: (lambda x, tau=1.0: sm(x, tau)[..., :1]), "shape"),
    ("E01", "softmax", lambda d: forgot_return, "none"),
    ("E01", "softmax", lambda d: loops_forever, "timeout"),
    ("E01", "softmax", lambda d: raises_inside, "raised"),
    ("E01", "softmax", lambda d: "def softmax(x): ...", "type"),
    # E02 attention with a mask
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, scale=1.0)),
     "forgot_scale"),
    ("E02", "scaled_dot_product_attention",
     lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, scale=np.shape(Q)[1])), "divided_by_dk"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, axis=0)), "columns"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, kt=False)),
     "k_not_kt"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, wt=True)),
     "weights_t"),
    ("E02", "scaled_dot_product_attention",
     lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, polarity=False)), "mask_polarity"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, fill=0.0)),
     "mask_zero"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, after=True)),
     "mask_after"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask, shift=False)),
     "unstable"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V, mask).T), "shape"),
    ("E02", "scaled_dot_product_attention", lambda d: (lambda Q, K, V, mask=None: sdpa(Q, K, V)), "no_mask"),
    # E03 the Jacobian
    *[("E03", "softmax_jacobian", (lambda k: lambda d: (lambda x, tau=1.0: jac(x, tau, k)))(k), k)
      for k in ("sign", "diag_only", "no_off_diagonal", "outer_only", "times_tau", "no_tau")],
    ("E03", "softmax_jacobian",
     lambda d: (lambda x, tau=1.0: (np.diag(np.exp(x)) - np.outer(np.exp(x), np.exp(x))) / tau), "exp"),
    ("E03", "softmax_jacobian", lambda d: (lambda x, tau=1.0: sm(x, tau)), "shape"),
    # E04 permutation
    ("E04", "permuted_output", lambda d: self_attn(d.X, d.X, d.X), "unpermuted"),
    ("E04", "permuted_output", lambda d: self_attn(d.X, d.X, d.X)[np.argsort(P)], "inverse_perm"),
    ("E04", "permuted_output", lambda d: self_attn(d.X[P], d.X[P], d.X), "values_not_permuted"),
    ("E04", "permuted_output", lambda d: np.round(self_attn(d.X[P], d.X[P], d.X[P]), 1), "rounding"),
    ("E04", "permuted_output", lambda d: self_attn(d.X[P], d.X[P], d.X[P]).T, "shape"),
    ("E04", "kv_permuted_output", lambda d: self_attn(d.X, d.X, d.X)[P], "permuted_rows"),
    ("E04", "kv_permuted_output", lambda d: self_attn(d.X, d.X[P], d.X), "keys_only"),
    ("E04", "kv_permuted_output", lambda d: self_attn(d.X, d.X, d.X[P]), "values_only"),
    ("E04", "kv_permuted_output", lambda d: -self_attn(d.X, d.X, d.X), "sign"),
    # E05 masks
    ("E05", "window_mask", lambda d: ~band(5, 0, 2), "polarity"),
    ("E05", "window_mask", lambda d: np.tril(np.ones((5, 5), bool)), "causal_only"),
    ("E05", "window_mask", lambda d: band(5, -2, 2), "not_causal"),
    ("E05", "window_mask", lambda d: band(5, 1, 3), "shifted_back"),
    ("E05", "window_mask", lambda d: band(5, 0, 3), "too_wide"),
    ("E05", "window_mask", lambda d: band(5, 0, 1), "too_narrow"),
    ("E05", "window_mask", lambda d: band(5, 0, 2).T, "transposed"),
    ("E05", "window_mask", lambda d: band(4, 0, 2), "shape"),
    ("E05", "window_mask", lambda d: band(5, 0, 2) * 0.5, "type"),
    ("E05", "pad_mask", lambda d: ~pad(), "polarity"),
    ("E05", "pad_mask", lambda d: pad().T, "rows"),
    ("E05", "pad_mask", lambda d: pad() & pad().T, "both"),
    ("E05", "pad_mask", lambda d: pad(5, 2), "shifted"),
    ("E05", "pad_mask", lambda d: pad() & np.tril(np.ones((5, 5), bool)), "causal"),
    ("E05", "pad_mask", lambda d: np.arange(5) < 3, "shape"),
    # E06 cost
    ("E06", "flops", lambda d: 4096 ** 2 * 64, "mults_only"),
    ("E06", "flops", lambda d: 2 * 4096 * 64, "one_row"),
    ("E06", "flops", lambda d: 2 * 4096 * 64 ** 2, "d_k_squared"),
    ("E06", "flops", lambda d: 2.1e9, "rounded"),
    ("E06", "flops", lambda d: 2.14e9, "truncated"),  # 2,147,483,648 cut off after 3 figures (rounded: 2.15e9)
    ("E06", "flops", lambda d: 2 * 4096 ** 2 * 64 - 4096 ** 2, "one_add_fewer"),  # d_k − 1 additions a score
    ("E06", "flops", lambda d: -2 * 4096 ** 2 * 64, "sign"),
    ("E06", "flops", lambda d: "2*4096**2*64", "text"),
    ("E06", "score_bytes", lambda d: 4096 ** 2 * 8, "float64"),
    ("E06", "score_bytes", lambda d: 4096 ** 2 * 32, "bits"),
    ("E06", "score_bytes", lambda d: 6.7e7, "rounded"),  # 67,108,864 to 2 significant figures
    ("E06", "score_bytes", lambda d: 4096 ** 2, "entries"),
    ("E06", "score_bytes", lambda d: 4096 * 64 * 4, "q_size"),
    ("E06", "score_bytes", lambda d: 64, "mib"),
    ("E06", "score_bytes", lambda d: [4096 ** 2 * 4] * 2, "shape"),
    ("E06", "growth", lambda d: 2, "linear"),
    ("E06", "growth", lambda d: 8, "cubic"),
    ("E06", "growth", lambda d: float("nan"), "nan"),
    # E07 simulation (standard deviations instead of variances, etc.)
    ("E07", "variances", lambda d: [4.1, 7.92, 16.2, 31.6], "std"),
    ("E07", "variances", lambda d: [4.08, 3.92, 4.04, 3.96], "scaled"),
    ("E07", "variances", lambda d: [1.0, 1 / 4, 1 / 16, 1 / 64], "divided_by_dk"),
    ("E07", "variances", lambda d: [4.1, 15.8, 64.3, 252.0], "unit_keys"),  # keys left at standard deviation 1
    ("E07", "variances", lambda d: [64.5, 255.0, 1020.0, 4100.0], "variance_as_scale"),
    ("E07", "variances", lambda d: [16.4, 64.8, 254.0], "shape"),
    ("E07", "variances", lambda d: None, "none"),
    ("E07", "slope", lambda d: 0.49, "std"),
    ("E07", "slope", lambda d: 0.01, "scaled"),
    ("E07", "slope", lambda d: -1.0, "divided_by_dk"),
    ("E07", "slope", lambda d: float(np.polyfit([4, 16, 64, 256], [16.2, 63.1, 257.0, 1019.0], 1)[0]), "no_logs"),
    ("E07", "slope", lambda d: 2.0, "value"),
    ("E07", "slope", lambda d: 0.3011, "mixed_logs"),  # polyfit(log2(d_ks), log10(variances))
    ("E07", "slope", lambda d: 3.32, "mixed_logs_inverse"),  # polyfit(log10(d_ks), log2(variances))
    # E08 temperature
    ("E08", "tau_two", lambda d: math.log(9) / 2, "times_tau"),
    ("E08", "tau_two", lambda d: 2 / math.log(10), "log_target"),
    ("E08", "tau_two", lambda d: -2 / math.log(9), "sign"),
    ("E08", "tau", lambda d: 1 / tau_for(d.s4), "times_tau"),
    ("E08", "tau", lambda d: 1 / math.log(9), "two_keys_only"),
    ("E08", "tau", lambda d: 0.3, "value"),
    # E09 heads
    ("E09", "split_heads", lambda d: (lambda X, h: np.reshape(X, (h, len(X), -1))), "reshape_no_transpose"),
    ("E09", "split_heads", lambda d: (lambda X, h: np.stack([np.asarray(X)[:, a::h] for a in range(h)])), "interleaved"),
    ("E09", "split_heads", lambda d: (lambda X, h: np.reshape(X, (len(X), h, -1))), "no_transpose"),
    ("E09", "split_heads", lambda d: (lambda X, h: np.asarray(X).T), "shape"),
    ("E09", "merge_heads", lambda d: (lambda H: np.reshape(H, (np.shape(H)[1], -1))), "reshape_no_transpose"),
    ("E09", "merge_heads", lambda d: (lambda H: np.reshape(H, (-1, np.shape(H)[2]))), "stacked"),
    ("E09", "merge_heads", lambda d: (lambda H: np.swapaxes(H, 0, 1)), "transpose_no_reshape"),
    # E10 break it
    ("E10", "cause", lambda d: 1, "overflow"),
    ("E10", "cause", lambda d: 3, "columns"),
    ("E10", "cause", lambda d: 4, "polarity"),
    ("E10", "cause", lambda d: "b", "text"),
    ("E10", "cause", lambda d: 2.5, "not_a_choice"),
    ("E10", "cause", lambda d: 5, "not_a_choice"),  # was "Check the arithmetic"
    ("E10", "cause", lambda d: 0, "not_a_choice"),  # was "Every entry of your answer is 0"
    ("E10", "safe_attention", lambda d: (lambda Q, K, V, mask=None: safe(Q, K, V, mask, fill=-1e9, zero_empty=False)),
     "big_negative"),
    ("E10", "safe_attention", lambda d: (lambda Q, K, V, mask=None: safe(Q, K, V, mask, zero_empty=False, shift=False)),
     "broken"),
    ("E10", "safe_attention", lambda d: (lambda Q, K, V, mask=None: safe(Q, K, V, mask, shift=False)), "unstable"),
    ("E10", "safe_attention", lambda d: (lambda Q, K, V, mask=None: safe(Q, K, V, mask, keepdims=False)), "no_keepdims"),
    ("E10", "safe_attention", lambda d: (lambda Q, K, V, mask=None: np.nan_to_num(
        safe(Q, K, V, mask, zero_empty=False, shift=False))), "nan_to_num"),
]


@pytest.mark.parametrize("item_id, part, make, key", HINT_TABLE,
                         ids=[f"{r[0]}-{r[1]}-{r[3]}" for r in HINT_TABLE])
def test_hint_table(item_id, part, make, key):
    it = get_item(item_id)
    fb = it.judge(part, make(it.context()))
    assert fb.status == NOT_YET and fb.mistake == key, str(fb)
    assert fb.message and "Traceback" not in fb.message


def test_every_declared_mistake_has_a_row_in_the_table():
    declared = {(it.id, p.name, m.key) for it in items() if it.kind == "exercise" for p in it.parts for m in p.mistakes}
    tabled = {(i, p, k) for i, p, _, k in HINT_TABLE}
    assert declared <= tabled, sorted(declared - tabled)
    assert sorted(it.id for it in items() if it.kind == "exercise") == EXERCISES


@pytest.mark.parametrize("item_id", EXERCISES)
def test_declared_mistakes_are_recognised_as_themselves(item_id):
    it = get_item(item_id)
    ns = it.context()
    for p in it.parts:
        for m in p.mistakes:
            fb = it.judge(p.name, m.answer(ns))
            assert fb.status == NOT_YET and fb.mistake == m.key, (p.name, m.key, str(fb))


# ----------------------------------------------------------------------------- right answers, in every form
def _rng_variances(seed, n=20_000):
    rng = np.random.default_rng(seed)
    return [float(np.var((rng.standard_normal((n, d)) * 2 * rng.standard_normal((n, d))).sum(1)))  # σ_k = 2
            for d in (4, 16, 64, 256)]


def right_answers():
    d4 = get_item("E04").context()
    X = d4.X
    rng_v = _rng_variances(0)
    return {
        "E01": {"softmax": lambda x, tau=1.0: sm(x, tau)},
        "E02": {"scaled_dot_product_attention": lambda Q, K, V, mask=None: sdpa(Q, K, V, mask)},
        "E03": {"softmax_jacobian": lambda x, tau=1.0: jac(x, tau)},
        "E04": {"permuted_output": self_attn(X, X, X)[P], "kv_permuted_output": self_attn(X, X, X)},
        "E05": {"window_mask": band(5, 0, 2), "pad_mask": pad()},
        "E06": {"flops": 2 * 4096 ** 2 * 64, "score_bytes": 4 * 4096 ** 2, "growth": 4},
        "E07": {"variances": rng_v, "slope": float(np.polyfit(np.log([4, 16, 64, 256]), np.log(rng_v), 1)[0])},
        "E08": {"tau_two": 2 / math.log(9), "tau": tau_for(get_item("E08").context().s4)},
        "E09": {"split_heads": lambda X, h: np.asarray(X).reshape(len(X), h, -1).transpose(1, 0, 2),
                "merge_heads": lambda H: np.asarray(H).transpose(1, 0, 2).reshape(np.shape(H)[1], -1)},
        "E10": {"cause": 2, "safe_attention": lambda Q, K, V, mask=None: safe(Q, K, V, mask)},
    }


def _as(form, v):
    if callable(v):
        return v
    if form == "float32":
        return np.asarray(v, dtype=np.float32) if np.asarray(v).dtype != bool else v
    if form == "list":
        return np.asarray(v).tolist()
    if form == "rounded":
        return np.round(np.asarray(v, dtype=float), 2) if np.asarray(v).dtype != bool else v
    return v


@pytest.mark.parametrize("form", ["exact", "float32", "list"])
@pytest.mark.parametrize("item_id", EXERCISES)
def test_right_answers_pass(item_id, form):
    answers = {k: _as(form, v) for k, v in right_answers()[item_id].items()}
    rep = check(item_id, **answers)
    assert bool(rep), str(rep)


def test_two_decimal_answers_pass():
    assert bool(check("E04", **{k: np.round(v, 2) for k, v in right_answers()["E04"].items()}))
    assert check("E08", tau_two=0.91).correct and check("E08", tau=0.398).correct


def test_float32_learner_functions_pass():
    f32 = lambda x, tau=1.0: sm(x, tau).astype(np.float32)  # noqa: E731
    assert check("E01", softmax=f32).correct


def test_tau_tolerance_is_a_tolerance_on_the_weight():
    it = get_item("E08")
    for part, s in (("tau_two", it.context().s2), ("tau", it.context().s4)):
        atol = it.part(part).tolerances()[0]
        t = it.expected()[part]
        for edge in (t - 0.99 * atol, t + 0.99 * atol):
            assert abs(sm(s, edge).max() - 0.9) <= 0.0051
            assert it.judge(part, edge).correct
        assert not it.judge(part, t + 1.5 * atol).correct


@pytest.mark.parametrize("seed", range(12))
def test_a_right_simulation_passes_whatever_the_seed(seed):
    v = _rng_variances(seed)
    assert get_item("E07").judge("variances", v).correct


@pytest.mark.parametrize("given, right", [
    (2147483648, True), (2.147483648e9, True), (2.15e9, True), (2.147e9, True), (2.1475e9, True), (2.148e9, True),
    (2.14e9, False), (2.16e9, False), (2.13e9, False), (2.1e9, False)])
def test_the_operation_count_passes_to_three_significant_figures_correctly_rounded(given, right):
    # half a unit in the third figure of 2,147,483,648 (5e6): 2.15e9 (rounded) passes, 2.14e9 (cut off) does not
    fb = get_item("E06").judge("flops", given)
    assert fb.correct == right, (given, str(fb))
    if given == 2.14e9:
        assert fb.mistake == "truncated" and "cut off" in fb.message and "2147483648" not in fb.message


@pytest.mark.parametrize("given, right", [(4 * 4096 ** 2, True), (6.71e7, True), (6.7109e7, True), (67.1e6, True),
                                          (6.72e7, False), (6.7e7, False)])
def test_the_bytes_pass_to_three_significant_figures_correctly_rounded(given, right):
    assert get_item("E06").judge("score_bytes", given).correct == right, given


def test_expected_answers_agree_with_an_independent_computation():
    it = get_item("E06")
    assert it.expected() == {"flops": 2 * 4096 ** 2 * 64, "score_bytes": 4 * 4096 ** 2, "growth": 4.0}
    np.testing.assert_array_equal(get_item("E05").expected()["window_mask"], band(5, 0, 2))
    assert abs(get_item("E08").expected()["tau_two"] - 2 / math.log(9)) < 1e-9


# ----------------------------------------------------------------------------- blanks and junk
@pytest.mark.parametrize("item_id", EXERCISES)
def test_blank_answers_are_not_tried(item_id):
    it = get_item(item_id)

    def stub(*args, **kwargs):
        ...

    for p in it.parts:
        for blank in ((..., stub) if p.kind == "function" else (...,)):
            fb = it.judge(p.name, blank)
            assert fb.status == NOT_TRIED, (p.name, str(fb))


JUNK = [None, "0.5", [[1, 2], [3]], float("nan"), np.full((5, 5), np.inf), np.zeros((2, 2), dtype=int), (1, 2),
        {"a": 1}, object(), 1j, np.empty((0, 3)), lambda *a: 1 / 0, lambda *a: "text", lambda *a: [[1, 2], [3]],
        lambda *a: np.full(3, np.nan), lambda *a: [0][0:0] or None, lambda *a: (_ for _ in ()).throw(SystemExit(1))]


@pytest.mark.parametrize("junk", JUNK, ids=[f"junk{i}" for i in range(len(JUNK))])
@pytest.mark.parametrize("item_id", EXERCISES)
def test_junk_is_feedback_never_an_exception(item_id, junk):
    it = get_item(item_id)
    for p in it.parts:
        fb = it.judge(p.name, junk)
        assert isinstance(fb, Feedback) and fb.status == NOT_YET, (p.name, str(fb))
        assert fb.message and fb._repr_html_()


def test_a_learner_function_that_raises_shows_the_learners_own_line():
    fb = get_item("E01").judge("softmax", raises_inside)
    assert fb.mistake == "raised"
    assert "NameError" in fb.message and "undefined_name" in fb.message and "`raises_inside`" in fb.message
    assert "grading" not in fb.message and "items.py" not in fb.message


def test_a_function_that_never_returns_is_stopped():
    it = get_item("E09")
    fb = it.judge("split_heads", loops_forever)
    assert fb.mistake == "timeout" and "did not return within" in fb.message


def test_wrong_shapes_name_both_shapes():
    fb = get_item("E04").judge("permuted_output", np.zeros((4, 1)))  # would broadcast against (4, 2)
    assert fb.mistake == "shape" and "(4, 1)" in fb.message and "(4, 2)" in fb.message
    fb = get_item("E09").judge("split_heads", lambda X, h: np.asarray(X))
    assert fb.mistake == "shape" and "(4, 6)" in fb.message and "(2, 4, 3)" in fb.message


def test_an_undefined_name_is_not_tried_not_a_crash():
    fb = check("E05", "window_mask")
    assert fb.status == NOT_TRIED and "no variable `window_mask`" in fb.message


def test_messages_never_print_the_expected_array():
    for item_id in ("E04",):
        it = get_item(item_id)
        exp = it.expected()
        numbers = {f"{x:.2f}" for v in exp.values() for x in np.ravel(v) if abs(x) not in (0.0, 0.5, 1.0, 2.0)}
        ns = it.context()
        for p in it.parts:
            for a in [m.answer(ns) for m in p.mistakes] + [np.zeros((4, 2)), np.ones((4, 2)) * 7, None]:
                msg = it.judge(p.name, a).message
                assert not {n for n in numbers if n in msg}, msg
                assert "[[" not in msg
    for row in HINT_TABLE:
        it = get_item(row[0])
        msg = it.judge(row[1], row[2](it.context())).message
        assert "[[" not in msg and "array(" not in msg, msg


def test_hints_come_one_at_a_time():
    for item_id in EXERCISES:
        _hints_shown.pop(item_id, None)
        n = len(get_item(item_id).hints)
        assert n >= 3
        for k in range(1, n + 1):
            assert f"hint {k} of {n}" in str(hint(item_id))
        assert "no more hints" in str(hint(item_id))


# ----------------------------------------------------------------------------- the pages
def _givens(name):
    cells = jupytext.read(ROOT / "exercises" / f"{name}.md").cells
    ns = {}
    for c in cells:
        tags = c.metadata.get("tags", [])
        if c.cell_type == "code" and not {"solution", "skip-execution"} & set(tags) \
                and "check(" not in c.source and "def " not in c.source.split("\n")[0] and "= ..." not in c.source:
            exec(c.source, ns)
    return ns


@pytest.mark.parametrize("name, item_id, keys", [
    ("e02-attention", "E02", "Q K V mask"), ("e04-permutation", "E04", "X perm"), ("e05-masks", "E05", "T window n_real"),
    ("e06-cost", "E06", "T d_k dtype"), ("e07-variance", "E07", "d_ks n sigma_k"), ("e08-temperature", "E08", "s2 s4 target"),
    ("e10-nan", "E10", "Q K V mask"),
])
def test_pages_use_the_items_numbers(name, item_id, keys):
    ns, d = _givens(name), get_item(item_id).context()
    for k in keys.split():
        np.testing.assert_array_equal(np.asarray(ns[k]), np.asarray(getattr(d, k)), err_msg=f"{name}: {k}")


def test_e10_page_really_gives_nan_and_the_repair_does_not():
    ns, d = _givens("e10-nan"), get_item("E10").context()
    with np.errstate(all="ignore"):
        out = ns["broken_attention"](d.Q, d.K, d.V, d.mask)
    assert np.isnan(out[0]).all() and np.isfinite(out[1:]).all()
    assert np.isfinite(get_item("E10").expected()["safe_attention"](d.Q, d.K, d.V, d.mask)).all()


def test_e05_praise_says_what_the_first_tokens_read():
    """Reader u5: "each token reads itself and the two tokens before it" is false for tokens 0 and 1."""
    from attn.grading import get_item

    item = get_item("E05")
    part = item.part("window_mask")
    mask = np.asarray(part.expected(item.context()))
    reads = mask.sum(axis=1)  # keys each query may read
    assert reads[0] == 1 and reads[1] == 2 and reads.max() == item.context().window
    assert "up to two tokens before it" in part.praise and "token 0 reads only itself" in part.praise


def test_e05_a_window_one_too_wide_is_not_called_shifted():
    """A learner (round-4 try): a window of 4 keeps every position of the right one and adds one; "shifted" is the
    other mistake, which loses the diagonal."""
    from attn.grading import get_item

    part = get_item("E05").part("window_mask")
    too_wide = next(m for m in part.mistakes if m.key == "too_wide")
    ns = get_item("E05").context()
    right, wide = np.asarray(part.expected(ns)), np.asarray(too_wide.answer(ns))
    assert (wide | right).sum() == wide.sum() > right.sum()  # a superset: widened, not moved
    assert not too_wide.hint.startswith("Shifted") and "too wide" in too_wide.hint
