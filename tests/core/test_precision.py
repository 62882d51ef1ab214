"""Numbers that hold in every dtype and range: float16, bfloat16, float32, float64, at the edges of each.

The dtype policy (attn._precision): float16 and bfloat16 are computed in float32, float32 and
float64 in their own precision (float32 scores that overflow are redone in float64), log-domain
results and cosines in float64; results come back in the input's dtype, and what that dtype
cannot hold is refused with a ValueError naming the caller's argument.

Tolerances, stated once:
- log_softmax: within 4 ulps of the input dtype at the exact value (mpmath, 50 digits);
- logsumexp: within 4 ulps of the result plus 4 float64 ulps of log n (the only place the
  maximum and the logarithm can cancel);
- softmax rows sum to 1 within n·eps of the dtype;
- attention outputs within (4 T_k + 4)·eps(working dtype)·max |V[:, c]| plus one ulp of the
  dtype of the exact value, for naive, blocked and multi-head alike;
- cosine similarity equal to the float64 value rounded to the dtype (one ulp).
"""
import math
import os
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn
from attn import blocked_attention, multi_head_attention
from attn.softmax import softmax_inplace

mpmath.mp.dps = 50
DTYPES = [np.float16, np.float32, np.float64]
# 60 examples a property keeps this file near 10 s; ATTN_PRECISION_EXAMPLES=2000 searches harder.
FAST = settings(max_examples=int(os.environ.get("ATTN_PRECISION_EXAMPLES", 60)), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
TAUS = st.sampled_from([1.0, 0.5, 3.0, 1e-3, 1e3, 1e-50, 1e50])


def every_magnitude(dtype):
    """Finite floats of ``dtype`` from its smallest normal to its largest, either sign, and 0."""
    info = np.finfo(dtype)
    return st.floats(-float(info.max), float(info.max), width=info.bits, allow_nan=False,
                     allow_infinity=False, allow_subnormal=False)


def ulp(value, dtype):
    """The spacing of ``dtype`` at the value (the smallest subnormal at 0; at the largest finite number,
    the spacing just below it)."""
    with np.errstate(over="ignore"):
        v = np.abs(np.asarray(value, dtype=dtype))
        if not np.isfinite(v):
            return float("inf")
        return float(np.spacing(np.nextafter(v, np.asarray(0, dtype)) if v == np.finfo(dtype).max else v))


@pytest.fixture(autouse=True)
def no_runtime_warnings():
    """A RuntimeWarning (overflow, invalid value, divide by zero) anywhere in these tests is a failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


# --- hand-made edge cases: underflowing weights, large logits, float16 at its limits -----------

def test_log_softmax_of_an_underflowing_weight_keeps_its_log():
    np.testing.assert_array_equal(attn.log_softmax([0.0, -1000.0]), [0.0, -1000.0])
    np.testing.assert_array_equal(attn.log_softmax(np.array([0.0, -1000.0], np.float32)), [0.0, -1000.0])
    np.testing.assert_array_equal(attn.log_softmax([0.0, -1000.0], tau=2.0), [-math.exp(-500), -500.0])  # not a rounded 0


def test_large_float32_logits_keep_their_digits():
    x = np.array([1e6, 1e6 + 1, 1e6 - 3, 3e38], np.float32)[:3]
    got = attn.log_softmax(x)
    assert got.dtype == np.float32
    # by hand: the differences from the maximum are -1, 0, -4 exactly; log1p(e^-1 + e^-4) = 0.326562...
    rest = math.log1p(math.exp(-1) + math.exp(-4))
    np.testing.assert_array_equal(got, np.array([-1 - rest, -rest, -4 - rest], np.float32))
    big = np.array([3.0e38, 2.9e38], np.float32)
    ref = [float(v) for v in attn.log_softmax(big.astype(np.float64))]
    np.testing.assert_array_equal(attn.log_softmax(big), np.array(ref, np.float32))


def test_log_softmax_of_a_dominant_entry_is_minus_the_others_mass():
    # log_softmax([0, -100])[0] = -log1p(e^-100) = -3.72e-44, not a rounded 0
    got = attn.log_softmax([0.0, -100.0])
    assert got[0] == -math.exp(-100) and got[1] == -100.0


def test_logsumexp_and_entropy_by_hand():
    assert attn.logsumexp([0.0, -1000.0]) == 0.0
    assert attn.logsumexp([1000.0, 1000.0]) == 1000.0 + math.log(2)
    assert attn.logsumexp(np.array([3.0e38, 3.0e38], np.float32)) == np.float32(3.0e38)
    assert float(attn.entropy(np.array([0.5, 0.5], np.float16))) == pytest.approx(math.log(2), abs=1e-3)


def half_precision_example(dtype=np.float16):
    Q = np.full((2, 4), 200, dtype)
    K = np.full((3, 4), 200, dtype)
    K[1] = -200
    V = np.arange(6).reshape(3, 2).astype(dtype)
    return Q, K, V


@pytest.mark.parametrize("tau", [1.0, 0.25, 1e-30])
def test_float16_example_attention(tau):
    Q, K, V = half_precision_example()
    out, w = attn.attention(Q, K, V, tau=tau)
    assert out.dtype == w.dtype == np.float16
    np.testing.assert_array_equal(out, [[2, 3], [2, 3]])
    np.testing.assert_array_equal(w, [[0.5, 0, 0.5], [0.5, 0, 0.5]])


def test_float16_weights_are_within_one_step_and_rounded_twice():
    """attn.softmax's docstring: a float16 weight is within one float16 step of the exact softmax, usually the
    nearest float16 number, but not always (two roundings, float32 then float16)."""
    def exact(row):  # mpmath at 50 digits, of the float16 logits as they are
        e = [mpmath.exp(mpmath.mpf(float(x))) for x in row]
        return [float(v / mpmath.fsum(e)) for v in e]

    rows = (np.random.default_rng(0).normal(size=(20000, 3)) * 4).astype(np.float16)
    lib = attn.softmax(rows).astype(np.float64)
    ref = attn.softmax(rows.astype(np.float64))  # within a few float64 ulps of the exact values
    step = np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(lib - ref) < step)  # within one float16 step, everywhere
    off = np.flatnonzero((lib != ref.astype(np.float16)).any(axis=1))
    assert 0 < off.size < 0.01 * len(rows)  # usually the nearest float16, not always
    # the docstring's example, against mpmath: the float32 result is a float16 midpoint, rounded to even
    row = np.array([-1.577, 1.782, -0.603], dtype=np.float16)
    w = attn.softmax(row)
    true = exact(row)
    nearest = np.float16(true[1])
    assert float(w[1]) == 0.8876953125 and float(nearest) == 0.88720703125
    assert abs(float(w[1]) - true[1]) > abs(float(nearest) - true[1])
    w32 = attn.softmax(row.astype(np.float32))[1]
    assert float(w32) == (float(nearest) + float(w[1])) / 2  # exactly the midpoint
    assert np.array_equal(w[[0, 2]], np.array([true[0], true[2]], dtype=np.float16))
    # the docstring's second example: the exact weight is below the midpoint, its float32 result is not on the
    # midpoint but one float32 step above it, and the rounding to float16 goes up, to the farther number
    row = np.array([4.1875, -0.149, 2.107], dtype=np.float16)
    assert row.tolist() == [4.1875, -0.1490478515625, 2.107421875]
    w, true = attn.softmax(row), exact(row)
    w32 = float(attn.softmax(row.astype(np.float32))[2])
    nearest = np.float16(true[2])
    mid = (float(nearest) + float(w[2])) / 2
    assert mid == 0.109771728515625 and f"{true[2]:.10f}" == "0.1097717276"
    assert float(nearest) < true[2] < mid < w32 == mid + float(np.spacing(np.float32(mid)))
    assert float(w[2]) > mid and abs(float(w[2]) - true[2]) > abs(float(nearest) - true[2])


@pytest.mark.parametrize("block_size, query_block_size", [(1, None), (2, 1), (512, 1024)])
def test_float16_example_blocked(block_size, query_block_size):
    Q, K, V = half_precision_example()
    res = blocked_attention(Q, K, V, block_size=block_size, query_block_size=query_block_size, return_lse=True)
    assert res.output.dtype == np.float16
    np.testing.assert_array_equal(res.output, [[2, 3], [2, 3]])
    # lse = 80000 + log 2 is beyond float16: kept in float32, as FlashAttention keeps it
    assert res.lse.dtype == np.float32
    np.testing.assert_allclose(res.lse, 80000 + math.log(2), rtol=1e-7)


@pytest.mark.parametrize("h", [1, 2])
def test_float16_example_multi_head(h):
    # X = I makes Q = W_Q, K = W_K, V = W_V exactly: the float16 example's Q, K, V in every head
    X = np.eye(3, dtype=np.float16)
    W_Q = np.full((3, 4 * h), 200, np.float16)
    W_K = W_Q.copy()
    W_K[1] = -200
    W_V = np.tile(np.arange(6).reshape(3, 2), h).astype(np.float16)
    W_O = np.vstack([np.eye(2)] * h).astype(np.float16) / h
    out, w = multi_head_attention(X, W_Q, W_K, W_V, W_O, h)
    assert out.dtype == w.dtype == np.float16
    np.testing.assert_array_equal(out, [[2, 3]] * 3)
    np.testing.assert_array_equal(w, [[[0.5, 0, 0.5]] * 3] * h)


def test_float16_scores_refuse_instead_of_inf():
    Q, K, _ = half_precision_example()
    with pytest.raises(ValueError, match=r"Q·Kᵀ overflows float16 at query 0, key 0.*attn\.attention"):
        attn.scores(Q, K)
    np.testing.assert_array_equal(attn.scores(Q.astype(np.float32), K.astype(np.float32))[0], [80000, -80000, 80000])


def test_bfloat16_follows_the_same_policy():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    Q, K, V = half_precision_example(ml_dtypes.bfloat16)
    out, w = attn.attention(Q, K, V)
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out.astype(np.float32), [[2, 3], [2, 3]])
    np.testing.assert_array_equal(blocked_attention(Q, K, V, block_size=1).astype(np.float32), [[2, 3], [2, 3]])
    np.testing.assert_array_equal(attn.softmax(np.array([0, 0], ml_dtypes.bfloat16)).astype(np.float32), [0.5, 0.5])
    with pytest.raises(ValueError, match="overflows bfloat16"):
        attn.log_softmax(np.array([3e38, -3e38], ml_dtypes.bfloat16))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("tau", [1e-50, 1e-300, 1e50, 1e300])
def test_tau_is_never_cast_to_zero_or_inf(dtype, tau):
    x = np.array([1.0, 2.0, 2.0 - 2.0**-8], dtype)
    w = attn.softmax(x, tau=tau)
    expected = [0, 1, 0] if tau < 1 else [1 / 3] * 3
    np.testing.assert_allclose(w.astype(np.float64), expected, atol=float(np.finfo(dtype).eps))
    out = attn.attention(x[:1, None], x[:, None], np.eye(3, dtype=dtype), tau=tau, scale=1.0).output
    np.testing.assert_allclose(out.astype(np.float64), [expected], atol=float(np.finfo(dtype).eps))
    blk = blocked_attention(x[:1, None], x[:, None], np.eye(3, dtype=dtype), tau=tau, scale=1.0, block_size=1)
    np.testing.assert_allclose(blk.astype(np.float64), [expected], atol=float(np.finfo(dtype).eps))


def test_tau_keeps_the_ratio_between_logits_in_float32():
    # τ = 1.5 · 2^-140 is subnormal in float32 (few digits); the ratio (x - max)/τ must use τ as given
    tau = 1.5 * 2.0**-140
    x = np.array([0.0, -(2.0**-140)], np.float32)  # (x - max) / τ = [0, -2/3]
    p = 1 / (1 + math.exp(-2 / 3))
    np.testing.assert_allclose(attn.softmax(x, tau=tau), [p, 1 - p], rtol=1e-6)
    np.testing.assert_allclose(attn.log_softmax(x, tau=tau), [math.log(p), math.log(1 - p)], rtol=1e-6)


def test_many_keys_accumulate_in_float32_or_better():
    T_k = 5000
    Q = np.zeros((1, 2), np.float16)
    K = np.zeros((T_k, 2), np.float16)
    V = np.ones((T_k, 1), np.float16)
    V[::2] = 3  # the mean is 2 exactly
    for out in (attn.attention(Q, K, V).output, blocked_attention(Q, K, V, block_size=700)):
        assert out.dtype == np.float16 and out[0, 0] == 2
    w = attn.softmax(np.zeros(T_k, np.float16))
    assert abs(float(w.astype(np.float64).sum()) - 1) < T_k * float(np.finfo(np.float16).eps) * 2.0**-11
    # float32 values near the largest number, summed over many keys: no overflow on the way
    V32 = np.full((300, 2), 3e38, np.float32)
    V32[:, 1] = -3e38
    V32[0, 1] = 1e-30
    for out in (attn.attention(Q[:, :1].astype(np.float32), np.zeros((300, 1), np.float32), V32).output,
                blocked_attention(Q[:, :1].astype(np.float32), np.zeros((300, 1), np.float32), V32, block_size=64)):
        np.testing.assert_allclose(out.astype(np.float64), [[3e38, -3e38 * 299 / 300]], rtol=1e-5)


def test_cosine_similarity_scales_its_norms():
    assert attn.cosine_similarity([[1e200, 1e200]], [[1, 1]])[0, 0] == 1.0
    assert attn.cosine_similarity([[1e-200, 1e-200]], [[1, 1]])[0, 0] == 1.0
    assert attn.cosine_similarity([[5e-324, 0.0]], [[1, 0]])[0, 0] == 1.0  # subnormal, still not zero
    big = np.array([[3e38, 3e38], [3.4e38, -3.4e38]], np.float32)
    C = attn.cosine_similarity(big, big)
    assert C.dtype == np.float32
    np.testing.assert_array_equal(C, [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="row 1 of K is zero"):
        attn.cosine_similarity([[1.0, 0.0]], [[1.0, 0.0], [0.0, 0.0]])


def test_jacobian_norm_near_one_hot_is_small_not_zero():
    # J = [[1e-200, -1e-200], [-1e-200, 1e-200]]: ‖J‖_F = 2e-200, although (1e-200)² underflows
    assert float(attn.softmax_jacobian_norm([1.0, 1e-200])) == pytest.approx(2e-200, rel=1e-15)
    assert float(attn.softmax_jacobian_norm(np.array([1.0, 1e-30], np.float32))) == pytest.approx(2e-30, rel=1e-6)
    assert float(attn.softmax_jacobian_norm([1.0, 0.0])) == 0.0  # exactly one-hot: exactly 0


# --- refusals name the caller's argument ----------------------------------------------------

def test_errors_name_the_callers_arguments():
    Q = np.full((1, 2), 1e160)
    K = np.array([[1e160, 1e160], [1.0, 1.0]])
    V = np.ones((2, 1))
    for call in (lambda: attn.attention(Q, K, V), lambda: blocked_attention(Q, K, V, block_size=1),
                 lambda: attn.scores(Q, K)):
        with pytest.raises(ValueError, match=r"^Q·Kᵀ overflows float64 at query 0, key 0") as err:
            call()
        assert " x " not in str(err.value) and "x holds" not in str(err.value)
    with pytest.raises(ValueError, match="X·W_Q overflows float16 at token 0, column 0"):
        multi_head_attention(np.full((2, 2), 300, np.float16), np.full((2, 2), 300, np.float16),
                             np.ones((2, 2), np.float16), np.ones((2, 2), np.float16), np.eye(2, dtype=np.float16), 1)
    with pytest.raises(ValueError, match="Q·Kᵀ overflows float64 at head 0, query 0, key 0"):
        multi_head_attention(np.full((2, 1), 1e160), np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)), 1)
    with pytest.raises(ValueError, match="scale must be a finite number"):
        attn.attention(Q, K, V, scale=float("nan"))
    with pytest.raises(ValueError, match=r"the scores Q·Kᵀ holds"):
        softmax_inplace(np.array([[np.inf, 0.0]]), name="the scores Q·Kᵀ")


def test_sequences_and_lse_are_named_in_errors():
    with pytest.raises(ValueError, match="X·W_Q overflows float16 at token 0, column 0"):
        attn.self_attention(np.full((2, 2), 300, np.float16), np.full((2, 2), 300, np.float16),
                            np.ones((2, 2), np.float16), np.ones((2, 2), np.float16))
    with pytest.raises(ValueError, match="Y·W_K overflows float32"):
        attn.cross_attention(np.ones((1, 1), np.float32), np.full((2, 1), 1e30, np.float32),
                             np.ones((1, 1), np.float32), np.full((1, 1), 1e30, np.float32), np.ones((1, 1), np.float32))
    with pytest.raises(ValueError, match="lse overflows float64 at query 0"):
        blocked_attention([[1e300]], [[1.0]], [[1.0]], tau=1e-300, return_lse=True)
    np.testing.assert_array_equal(blocked_attention([[1e300]], [[1.0]], [[2.0]], tau=1e-300), [[2.0]])
    with pytest.raises(ValueError, match=r"softmax_jacobian_norm\(w, tau\) overflows float16 at its only entry: .*tau = 1e-30"):
        attn.softmax_jacobian_norm(np.array([0.5, 0.5], np.float16), tau=1e-30)


def test_log_domain_refuses_what_the_dtype_cannot_hold():
    with pytest.raises(ValueError, match=r"log_softmax\(x\) overflows float16 at index \(1,\)"):
        attn.log_softmax(np.array([65504, -65504], np.float16))
    with pytest.raises(ValueError, match=r"log_softmax\(x\) at index \(1,\) is below"):
        attn.log_softmax([0.0, -1e300], tau=1e-10)
    with pytest.raises(ValueError, match="tau = 1e-310"):
        attn.softmax_jacobian([0.5, 0.5], tau=1e-310)


# --- properties ------------------------------------------------------------------------------

def beyond(value, dtype) -> bool:
    """True if the exact ``value`` rounds to ±inf in ``dtype``."""
    with np.errstate(over="ignore"):
        return bool(np.isinf(np.asarray(float(value)).astype(dtype))) or abs(value) > np.finfo(np.float64).max


def mp_log_softmax(x, tau):
    """(log-softmax, log-sum-exp) of x / τ with 400 digits: enough for log(1 + 1e-324), the smallest case."""
    with mpmath.workdps(400):
        return _mp_log_softmax(x, tau)


def _mp_log_softmax(x, tau):
    z = [(mpmath.mpf(float(v)) - mpmath.mpf(float(max(x)))) / mpmath.mpf(tau) for v in x]
    lse = mpmath.log(mpmath.fsum(mpmath.exp(v) for v in z))
    return [v - lse for v in z], lse


@st.composite
def logits(draw):
    dtype = draw(st.sampled_from(DTYPES))
    x = draw(arrays(dtype, st.integers(1, 6), elements=every_magnitude(dtype)))
    return x, draw(TAUS)


@FAST
@given(logits())
def test_log_softmax_against_mpmath(args):
    x, tau = args
    ref, _ = mp_log_softmax(x, tau)
    if any(beyond(r, x.dtype) for r in ref):  # the dtype cannot hold the answer: a clear refusal
        with pytest.raises(ValueError, match="log_softmax"):
            attn.log_softmax(x, tau=tau)
        return
    got = attn.log_softmax(x, tau=tau)
    assert got.dtype == x.dtype
    for g, r in zip(got, ref):
        assert abs(mpmath.mpf(float(g)) - r) <= 4 * ulp(float(r), x.dtype), (x, tau, g, r)


@FAST
@given(logits())
def test_logsumexp_against_mpmath(args):
    x, _ = args
    _, ref = mp_log_softmax(x, 1.0)
    ref = ref + mpmath.mpf(float(max(x)))
    if beyond(ref, x.dtype):
        with pytest.raises(ValueError, match="logsumexp"):
            attn.logsumexp(x)
        return
    got = attn.logsumexp(x)
    assert got.dtype == x.dtype
    tol = 4 * ulp(float(ref), x.dtype) + 4 * ulp(math.log(len(x)), np.float64)
    assert abs(mpmath.mpf(float(got)) - ref) <= tol, (x, got, ref)


@FAST
@given(logits())
def test_softmax_rows_sum_to_one_and_match_mpmath(args):
    x, tau = args
    rows = np.stack([x, x[::-1]])  # (2, n)
    w = attn.softmax(rows, tau=tau)
    eps = float(np.finfo(x.dtype).eps)
    n = x.shape[0]
    assert w.dtype == x.dtype and (w >= 0).all()
    np.testing.assert_allclose(w.astype(np.float64).sum(axis=1), 1.0, rtol=0, atol=n * eps)
    ref, _ = mp_log_softmax(x, tau)
    eps_work = float(np.finfo(np.result_type(x.dtype, np.float32)).eps)
    for g, r in zip(w[0], ref):
        exact = mpmath.exp(r)  # relative error of a weight: |log w| + n + 2 roundings of the working dtype
        assert abs(mpmath.mpf(float(g)) - exact) <= (abs(r) + n + 2) * eps_work * exact + ulp(float(exact), x.dtype)


@st.composite
def attention_problems(draw):
    """Q and K with small-integer significands and one power-of-2 magnitude each, so every score is
    exact in every dtype: the paths can differ only in the softmax and the weighted sum."""
    dtype = draw(st.sampled_from(DTYPES))
    info = np.finfo(dtype)
    T_q, T_k, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 3))
    d_k = draw(st.sampled_from([1, 4]))  # scale 1 or 1/2: exact
    exps = st.integers(int(info.minexp) + 3, int(info.maxexp) - 3)
    a = draw(exps)
    # scores stay above the working dtype's smallest normal (below it IEEE underflow drops digits
    # gradually, which a tiny τ would magnify: documented, not refused)
    work_minexp = int(np.finfo(np.result_type(dtype, np.float32)).minexp)
    b = draw(st.integers(max(int(info.minexp) + 3, work_minexp + 4 - a), int(info.maxexp) - 3))
    Qi = draw(arrays(np.int64, (T_q, d_k), elements=st.integers(-3, 3)))
    Ki = draw(arrays(np.int64, (T_k, d_k), elements=st.integers(-3, 3)))
    V = draw(arrays(dtype, (T_k, d_v), elements=every_magnitude(dtype)))
    Q = np.ldexp(Qi.astype(np.float64), a).astype(dtype)
    K = np.ldexp(Ki.astype(np.float64), b).astype(dtype)
    # Q Kᵀ itself must fit the dtype (the scale is applied after it; attn refuses a product that overflows)
    assume(int((np.abs(Qi) @ np.abs(Ki).T).max(initial=0)) * mpmath.mpf(2) ** (a + b) <= mpmath.mpf(float(info.max)))
    S = [[mpmath.mpf(int(Qi[i] @ Ki[j])) * mpmath.mpf(2) ** (a + b) / mpmath.sqrt(d_k) for j in range(T_k)]
         for i in range(T_q)]  # the exact scores
    return Q, K, V, S, draw(TAUS)


def reference_attention(S, V, tau):
    """Weights and output in float64 from the exact scores (mpmath's exp and sums; float64 would do for
    float16 and float32, mpmath also covers float64 values near its largest number)."""
    W, O = [], []
    for row in S:
        m = max(row)
        e = [mpmath.exp((s - m) / mpmath.mpf(tau)) for s in row]
        total = mpmath.fsum(e)
        w = [v / total for v in e]
        W.append(w)
        O.append([mpmath.fsum(w[j] * mpmath.mpf(float(V[j, c])) for j in range(len(w))) for c in range(V.shape[1])])
    return W, O


@FAST
@given(attention_problems())
def test_naive_blocked_and_multi_head_agree_with_the_reference(p):
    Q, K, V, S, tau = p
    dtype = Q.dtype
    big = max(abs(s) for row in S for s in row)
    if big > np.finfo(np.float64).max:  # no float64 can hold a score: every path refuses, naming Q·Kᵀ
        for call in (lambda: attn.attention(Q, K, V, tau=tau), lambda: blocked_attention(Q, K, V, tau=tau)):
            with pytest.raises(ValueError, match="Q·Kᵀ overflows float64"):
                call()
        return
    W_ref, O_ref = reference_attention(S, V, tau)
    out, w = attn.attention(Q, K, V, tau=tau)
    blk = blocked_attention(Q, K, V, tau=tau, block_size=2, query_block_size=2)
    assert out.dtype == w.dtype == blk.dtype == dtype
    T_k = K.shape[0]
    eps_work = float(np.finfo(np.result_type(dtype, np.float32)).eps)
    for c in range(V.shape[1]):
        vmax = float(np.max(np.abs(V[:, c].astype(np.float64))))
        for i in range(Q.shape[0]):
            ref = O_ref[i][c]
            tol = (4 * T_k + 4) * eps_work * vmax + ulp(float(ref), dtype) + T_k * ulp(0.0, dtype)
            for got in (out[i, c], blk[i, c]):
                assert abs(mpmath.mpf(float(got)) - ref) <= tol, (got, ref, tol)
    for i in range(Q.shape[0]):
        for j in range(T_k):
            assert abs(float(w[i, j]) - float(W_ref[i][j])) <= (4 * T_k + 4) * eps_work + ulp(float(W_ref[i][j]), dtype)
    # multi-head self-attention on X = I: Q, K, V are the weight matrices themselves (T_q = T_k)
    if Q.shape[0] == K.shape[0]:
        T = Q.shape[0]
        X = np.eye(T, dtype=dtype)
        mh = multi_head_attention(X, Q, K, V, np.eye(V.shape[1], dtype=dtype), 1)
        ref_self = attn.attention(Q, K, V)
        np.testing.assert_array_equal(mh.output, ref_self.output)
        np.testing.assert_array_equal(mh.weights[0], ref_self.weights)


@FAST
@given(st.sampled_from(DTYPES), st.data())
def test_cosine_similarity_in_range_and_equal_to_float64(dtype, data):
    shape = st.tuples(st.integers(1, 3), st.just(data.draw(st.integers(1, 4))))
    Q = data.draw(arrays(dtype, shape, elements=every_magnitude(dtype)))
    K = data.draw(arrays(dtype, shape, elements=every_magnitude(dtype)))
    zero_rows = (Q == 0).all(axis=1).any() or (K == 0).all(axis=1).any()
    if zero_rows:
        with pytest.raises(ValueError, match="is zero"):
            attn.cosine_similarity(Q, K)
        return
    C = attn.cosine_similarity(Q, K)
    assert C.dtype == dtype and (np.abs(C.astype(np.float64)) <= 1).all()
    for i in range(Q.shape[0]):
        for j in range(K.shape[0]):
            q = [mpmath.mpf(float(v)) for v in Q[i]]
            k = [mpmath.mpf(float(v)) for v in K[j]]
            ref = mpmath.fsum(a * b for a, b in zip(q, k)) / mpmath.sqrt(mpmath.fsum(a * a for a in q)) \
                / mpmath.sqrt(mpmath.fsum(b * b for b in k))
            # the float64 value rounded to the dtype: within one ulp of the dtype (and of float64 for float64)
            tol = ulp(float(ref), dtype) + 8 * ulp(1.0, np.float64)
            assert abs(mpmath.mpf(float(C[i, j])) - ref) <= tol, (Q[i], K[j], C[i, j], ref)


# --- every public function states its dtype policy ------------------------------------------

def test_every_public_function_documents_its_dtypes():
    import inspect
    missing = []
    for name in attn.__all__:
        obj = getattr(attn, name)
        if inspect.isfunction(obj):
            doc = inspect.getdoc(obj) or ""
            if not ("float16" in doc or "float64" in doc) or "dtype" not in doc.lower():
                missing.append(name)
    assert not missing, f"docstrings that do not say what happens to each dtype: {missing}"


# --- review (branch r12): defects found by an adversarial pass, each with its right value ----

def _mp_softmax(x, tau):
    """softmax(x / τ) of a float row, in mpmath (50 digits): the reference, independent of attn."""
    z = [mpmath.mpf(float(v)) / mpmath.mpf(tau) for v in x]
    m = max(z)
    e = [mpmath.exp(v - m) for v in z]
    total = mpmath.fsum(e)
    return [float(v / total) for v in e]


def test_softmax_at_large_float32_logits_and_tau_above_1_is_not_nan():
    # x/τ and max/τ were rounded differently (float32 vs float64 then float32), so the winner got
    # the exponent +1 ulp of 2.3e33: exp overflowed and the row came back [nan, 0].
    x = np.array([1.66824159e35, 0.0], np.float32)
    got = attn.softmax(x, tau=72.54451256039839)
    np.testing.assert_array_equal(got, np.array([1.0, 0.0], np.float32))
    # the same through attention, where float32 scores of that size meet τ > 1
    Q = np.array([[7.836263351624663e17, 1.8194542494576804e18]], np.float32)
    K = np.array([[2.4094258006432154e17, 2.589569785738035e16], [0.0, 0.0]], np.float32)
    V = np.array([[1.0], [0.0]], np.float32)
    np.testing.assert_array_equal(attn.attention(Q, K, V, tau=72.54451256039839).weights, [[1.0, 0.0]])
    np.testing.assert_array_equal(blocked_attention(Q, K, V, tau=72.54451256039839, block_size=1), [[1.0]])


def test_softmax_span_beyond_the_dtype_with_a_large_tau():
    # max - min exceeds float32's range but (x - max)/τ = -3.4: the old threshold (max > fmax·eps)
    # missed a maximum of 3e31, x - max overflowed to -inf and the weight 0.032 became 0.
    fmax = float(np.finfo(np.float32).max)
    x = np.array([-fmax, 3e31], np.float32)
    want = _mp_softmax(x, 1e38)  # [0.0322073..., 0.9677926...]
    np.testing.assert_allclose(attn.softmax(x, tau=1e38), want, rtol=4 * 2.0**-23)
    x64 = np.array([-1.7976931348623157e308, 1e293])
    np.testing.assert_allclose(attn.softmax(x64, tau=1e308), _mp_softmax(x64, 1e308), rtol=4 * 2.0**-52)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_agrees_with_naive_when_scores_span_more_than_the_dtype(dtype):
    # scores 2e38 and -2e38 (float32) differ by more than float32 holds; with τ = 1e38 the weights are
    # softmax([2, -2]) = [1/(1+e^-4), ...]. Blocked attention returned 1.0: s - m overflowed to -inf.
    big = 2e38 if dtype == np.float32 else 1.5e308
    tau = big / 2
    Q = np.array([[1.0]], dtype)
    K = np.array([[big], [-big]], dtype)
    V = np.array([[1.0], [0.0]], dtype)
    want = 1 / (1 + math.exp(-4))
    rtol = 8 * float(np.finfo(dtype).eps)
    naive = attn.attention(Q, K, V, tau=tau, scale=1.0).output
    np.testing.assert_allclose(naive, [[want]], rtol=rtol)
    for bs in (1, 2):
        np.testing.assert_allclose(blocked_attention(Q, K, V, tau=tau, scale=1.0, block_size=bs), [[want]], rtol=rtol)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dtype=st.sampled_from([np.float32, np.float64]), frac=st.lists(st.floats(-1, 1), min_size=2, max_size=6),
       log_tau=st.floats(0.01, 40), rel_tau=st.floats(-4, 0))
def test_softmax_near_the_largest_number_with_tau_above_1(dtype, frac, log_tau, rel_tau):
    """Logits anywhere up to ±max, τ > 1: finite weights summing to 1 for any τ; and for τ within four
    decades of the largest number (where (x - max)/τ is moderate and the weights are well conditioned)
    softmax, naive and blocked attention equal the mpmath weights."""
    fmax = float(np.finfo(dtype).max)
    eps = float(np.finfo(dtype).eps)
    x = (np.array(frac) * fmax).astype(dtype)
    got = attn.softmax(x, tau=10.0**log_tau)
    assert np.isfinite(got).all() and abs(float(got.astype(np.float64).sum()) - 1) <= len(x) * eps

    tau = fmax * 10.0**rel_tau
    want = _mp_softmax(x, tau)
    # the condition of softmax in its logits is |x|/τ ≤ 10⁴ here: allow eps·(4 + 2·max|x|/τ) absolute
    tol = eps * (4 + 2 * (float(np.max(np.abs(x.astype(np.float64)))) / tau))
    np.testing.assert_allclose(attn.softmax(x, tau=tau), want, rtol=0, atol=tol)
    K = x.reshape(-1, 1)
    V = np.eye(len(x), dtype=dtype)
    Q = np.ones((1, 1), dtype)
    np.testing.assert_allclose(attn.attention(Q, K, V, tau=tau, scale=1.0).output[0], want, rtol=0, atol=tol)
    np.testing.assert_allclose(blocked_attention(Q, K, V, tau=tau, scale=1.0, block_size=2)[0], want, rtol=0, atol=tol)


def test_entropy_refuses_rows_that_do_not_sum_to_1_however_long():
    # the tolerance was sqrt(eps)·n: 10 000 float32 entries summing to 3 were accepted, "entropy" 24.3 > log n
    with pytest.raises(ValueError, match="sums to 3.0"):
        attn.entropy(np.full(10_000, 3e-4, np.float32))
    with pytest.raises(ValueError, match="sum to 1"):
        attn.entropy(np.full(1_000_000, 1.01e-6))
    with pytest.raises(ValueError, match="sum to 1"):
        attn.entropy(np.full(100, 0.02, np.float16))
    with pytest.raises(ValueError, match="sum to 1"):
        attn.softmax_jacobian_norm(np.full(10_000, 3e-4, np.float32))
    # while weights that attn itself computes, in every dtype and at every length, are accepted
    rng = np.random.default_rng(0)
    for dtype in (np.float16, np.float32, np.float64):
        for n in (1, 7, 10_000, 200_000):
            w = attn.softmax(rng.standard_normal(n).astype(dtype) * 3)
            H = float(attn.entropy(w))
            assert 0 <= H <= math.log(n) + 1e-3
    n = 1_000_000
    assert float(attn.entropy(np.full(n, 1 / n))) == pytest.approx(math.log(n), rel=1e-12)


def test_entropy_tau_derivative_keeps_each_slice_its_own_scale():
    # one power of 2 for the whole array flushed the tiny row to 0: the answer was [0, 0]
    x = np.array([[1e300, 0.0], [1e-300, -1e-300]])
    tau = 1e-300
    got = attn.entropy_tau_derivative(x, tau=tau)
    # row 1: x/τ = ±1 exactly, s = softmax([1, -1]), Var_s(x) = 4 s0 s1 x², s0 s1 = 1/(4 cosh² 1):
    # Var/τ³ = x²/(τ³ cosh² 1) = 1/(τ cosh² 1) with x = τ
    want = float(1 / (mpmath.mpf(tau) * mpmath.cosh(1) ** 2))  # 4.1997434e299
    assert got[0] == 0.0
    assert got[1] == pytest.approx(want, rel=1e-13)


def test_self_attention_refuses_an_additive_or_misshapen_mask_with_causal():
    X = np.eye(3)
    W = np.eye(3)
    additive = np.where(attn.causal_mask(3), 0.0, -np.inf)
    # cast to bool, 0 -> False and -inf -> True: exactly the hidden keys became the readable ones
    with pytest.raises(TypeError, match="mask must be boolean"):
        attn.self_attention(X, W, W, W, mask=additive, causal=True)
    with pytest.raises(ValueError, match=r"mask has shape \(3,\)"):
        attn.self_attention(X, W, W, W, mask=[True, False, True], causal=True)
    both = attn.self_attention(X, W, W, W, mask=np.ones((3, 3), bool), causal=True).weights
    np.testing.assert_array_equal(both, attn.self_attention(X, W, W, W, causal=True).weights)


def test_count_attention_flops_checks_scale():
    with pytest.raises(ValueError, match="scale must be a finite number"):
        attn.count_attention_flops([[1.0]], [[1.0]], [[1.0]], scale=float("nan"))


def test_counts_and_offsets_name_the_argument():
    with pytest.raises(TypeError, match="offset must be a whole number"):
        attn.causal_mask(3, 4, offset=1.5)
    with pytest.raises(TypeError, match="T must be a whole number"):
        attn.sinusoidal_encoding(1.5, 4)
    with pytest.raises(TypeError, match="d must be a whole number"):
        attn.sinusoidal_encoding(2, "4")
    with pytest.raises(ValueError, match="base must be a finite number"):
        attn.sinusoidal_encoding(2, 4, base="x")


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max, reason="long double is float64 here")
def test_long_double_values_beyond_float64_are_not_cast_through_it():
    # V's largest entry went through float64 (inf, with an overflow warning); blocked returned [[nan]]
    ld = np.longdouble
    Q = np.array([[1, 0]], ld)
    K = np.eye(2, dtype=ld)
    V = np.array([[ld("1e4000")], [ld("-1e4000")]])
    w0 = 1 / (1 + mpmath.exp(-1 / mpmath.sqrt(2)))  # softmax([1/√2, 0])[0]
    want = (2 * w0 - 1) * mpmath.mpf(10) ** 4000  # 3.3952e3999
    for got in (attn.attention(Q, K, V).output, blocked_attention(Q, K, V), blocked_attention(Q, K, V, block_size=1)):
        assert got.dtype == ld
        assert abs(mpmath.mpf(str(got[0, 0])) / want - 1) < 1e-15
    # scores [1e4000/√2, 0]: lse = 1e4000/√2 (+ log(1 + 0)), beyond float64, where it used to be computed
    lse = blocked_attention(Q * ld("1e4000"), K, V, return_lse=True).lse
    assert lse.dtype == ld and abs(mpmath.mpf(str(lse[0])) / (mpmath.mpf("1e4000") / mpmath.sqrt(2)) - 1) < 1e-15


def test_attention_grad_query_with_values_and_keys_near_float64s_largest():
    # v_j - v̄ and k_j - k̄ overflowed float64 on the way, so a finite derivative was refused
    w0 = 1 / (1 + mpmath.exp(-2))  # softmax([2, 0])[0]
    want = w0 * (1 - w0) * (2 * mpmath.mpf(1.7e308)) * 2  # w0 w1 (v0 - v1)(k0 - k1) = 7.1396e307
    got = attn.attention_grad_query([1.0, 0.0], [[2.0, 0.0], [0.0, 0.0]], [[1.7e308], [-1.7e308]], scale=1.0)
    assert got[0, 1] == 0.0
    assert abs(mpmath.mpf(float(got[0, 0])) / want - 1) < 1e-14
    # keys ±1.7e308 with a tiny query: the weights are one-hot, the derivative is exactly 0
    got = attn.attention_grad_query([1e-300, 0.0], [[1.7e308, 0.0], [-1.7e308, 0.0]], [[1.0], [0.0]], scale=1.0)
    np.testing.assert_array_equal(got, [[0.0, 0.0]])


def test_wiring_errors_name_the_callers_arguments_not_Q_K_V():
    # self_attention([[nan, 0], ...]) said "Q must be finite; Q[0, 0] = nan": the caller passed X, never Q
    I = np.eye(2)
    with pytest.raises(ValueError, match=r"^X must be finite; X\[0, 0\]"):
        attn.self_attention([[np.nan, 0.0], [1.0, 0.0]], I, I, I)
    with pytest.raises(ValueError, match=r"^X_query must be finite"):
        attn.attention_block([[np.nan, 0.0]], [[1.0, 0.0]], I, I, I)
    with pytest.raises(ValueError, match=r"^W_K must be finite; W_K\[0, 0\]"):
        attn.cross_attention([[1.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]], I, [[np.inf, 0.0], [0.0, 1.0]], I)
    with pytest.raises(ValueError, match=r"^Y must be finite in every row a query may read; Y\[1\]"):
        attn.cross_attention([[1.0, 0.0]], [[1.0, 0.0], [np.nan, 0.0]], I, I, I)
    # a row no query may read may hold anything, as in attn.attention
    out = attn.cross_attention([[1.0, 0.0]], [[1.0, 0.0], [np.nan, 0.0]], I, I, I, mask=[[True, False]])
    np.testing.assert_array_equal(out.output, [[1.0, 0.0]])


def test_count_attention_flops_refuses_instead_of_returning_nan():
    # Python floats: 1e300·1e300 = inf, then inf·(1e-300/1e300 = 0) = NaN, returned as the output
    with pytest.raises(ValueError, match="Q·Kᵀ overflows float64 at query 0, key 0"):
        attn.count_attention_flops([[1e300]], [[1e300], [-1e300]], [[1.0], [0.0]], tau=1e300, scale=1e-300)
    with pytest.raises(ValueError, match="scale / tau"):
        attn.count_attention_flops([[1.0]], [[1.0], [-1.0]], [[1.0], [0.0]], tau=1e-300, scale=1e300)


def test_small_helpers_follow_the_dtype_policy_and_name_their_arguments():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert attn.score_matrix_bytes(2, 3, ml_dtypes.bfloat16) == 12  # = attn.scores(Q, K).nbytes for bfloat16
    with pytest.raises(TypeError, match="rng must be"):
        attn.random_logits(4, rng="x")


def test_python_integers_beyond_int64_are_real_numbers():
    # NumPy keeps 2**70 as an object; it was refused as "x must hold real numbers"
    from fractions import Fraction
    np.testing.assert_array_equal(attn.log_softmax([2**70, 2**70 - 2**20]), [0.0, -(2.0**20)])  # exact: 2**20 apart
    third = math.log1p(math.exp(-1 / 3))
    np.testing.assert_allclose(attn.log_softmax([Fraction(1, 3), 0]), [-third, -1 / 3 - third], rtol=1e-15)
    with pytest.raises(ValueError, match="x holds an integer beyond float64's range"):
        attn.softmax([2**2000, 0])
    with pytest.raises(TypeError, match="x must hold real numbers"):
        attn.softmax([2**70, "a"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_convex_combination_of_equal_subnormal_values_is_that_value(dtype):
    # each w_j·v_j was rounded on the subnormal grid: with every value 7 (float32) or 3 (float64) times the
    # smallest subnormal, naive attention returned 8 (or 4) of them, outside the values' range
    tiny = float(np.finfo(dtype).smallest_subnormal)
    v = dtype(7 * tiny) if dtype == np.float32 else dtype(-3 * tiny)
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((4, 3)).astype(dtype)
    K = rng.standard_normal((6, 3)).astype(dtype)
    V = np.full((6, 2), v, dtype)
    np.testing.assert_array_equal(attn.attention(Q, K, V).output, np.full((4, 2), v, dtype))
    np.testing.assert_array_equal(blocked_attention(Q, K, V, block_size=4), np.full((4, 2), v, dtype))
    X = np.eye(3, dtype=dtype)
    np.testing.assert_array_equal(multi_head_attention(X, X, X, np.full((3, 2), v, dtype), np.eye(2, dtype=dtype), 1).output,
                                  np.full((3, 2), v, dtype))
    # and values spread over the subnormal range: within one ulp of the exact weighted average (float64)
    V = (rng.integers(1, 50, (6, 2)) * tiny).astype(dtype)
    W = attn.attention(Q.astype(np.float64), K.astype(np.float64), np.eye(6)).output  # the weights, in float64
    exact = [[mpmath.fsum(mpmath.mpf(float(W[i, j])) * mpmath.mpf(float(V[j, c])) for j in range(6)) for c in range(2)]
             for i in range(4)]
    got = attn.attention(Q, K, V).output
    for i in range(4):
        for c in range(2):
            assert abs(mpmath.mpf(float(got[i, c])) - exact[i][c]) <= tiny


def test_a_column_near_the_largest_number_keeps_its_small_entries():
    # a column holding both -1.5e38 and -9.4e-11 was divided by 2**127 to keep sums finite, which flushed
    # -9.4e-11 to 0: a query that reads only that key got 0.0 (outside the column's range, all digits lost)
    fmax = float(np.finfo(np.float32).max)
    V = np.array([[-9.425678e-11, 5.9e-16], [-1.5457767e38, 2.7e37], [1.0, -4.1e20]], np.float32)
    mask = np.array([[True, False, False], [False, False, True]])
    Q = np.ones((2, 1), np.float32)
    K = np.ones((3, 1), np.float32)
    want = np.array([V[0], V[2]])
    np.testing.assert_array_equal(attn.attention(Q, K, V, mask=mask).output, want)
    for bs in (1, 2, 3):
        np.testing.assert_array_equal(blocked_attention(Q, K, V, mask=mask, block_size=bs), want)
    # and the large entries still do not overflow on the way: equal weights on ±fmax·0.9 give 0
    V2 = np.array([[0.9 * fmax], [-0.9 * fmax]], np.float32)
    for out in (attn.attention(np.ones((1, 1), np.float32), K[:2], V2).output, blocked_attention(np.ones((1, 1), np.float32), K[:2], V2)):
        assert out[0, 0] == 0.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dtype=st.sampled_from(DTYPES), data=st.data(), equal=st.booleans(), log_tau=st.floats(-10, 10))
def test_every_output_lies_in_the_range_of_each_value_column(dtype, data, equal, log_tau):
    """Proposition 1 in floating point: naive and blocked outputs stay finite and within the range of each value
    column up to this file's tolerance, (4 T_k + 4)·eps·max |V[:, c]| plus one ulp, for values from the subnormal
    range to the largest finite number (a column near the largest number must not overflow on the way)."""
    T_k = data.draw(st.integers(1, 6))
    info = np.finfo(dtype)
    val = st.floats(-float(info.max), float(info.max), width=info.bits, allow_nan=False, allow_infinity=False)
    V = np.array(data.draw(st.lists(st.lists(val, min_size=2, max_size=2), min_size=T_k, max_size=T_k)), dtype)
    if equal:
        V[:] = V[0]
    K = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=T_k, max_size=T_k)), dtype).reshape(T_k, 1)
    Q = np.array([[1.0], [-2.0], [0.5]], dtype)
    V64 = V.astype(np.float64)
    slack = (4 * T_k + 4) * float(info.eps) * np.abs(V64).max(axis=0) + float(info.smallest_subnormal)
    tau = 10.0**log_tau
    for out in (attn.attention(Q, K, V, tau=tau).output, blocked_attention(Q, K, V, tau=tau, block_size=2)):
        o = out.astype(np.float64)
        assert np.isfinite(out).all()
        with np.errstate(over="ignore"):  # the test's own bounds may pass float64's largest number: then no bound
            assert ((o >= V64.min(axis=0) - slack) & (o <= V64.max(axis=0) + slack)).all(), (out, V)


def test_axis_is_checked_and_none_means_every_entry():
    # logsumexp(x, axis=None) failed inside numpy ("when axis=None, `indices` must have a single dimension")
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    total = math.log(sum(math.exp(v) for v in (1.0, 2.0, 3.0, 4.0)))  # 4.440189698561196
    assert float(attn.logsumexp(x, axis=None)) == pytest.approx(total, rel=1e-15)
    assert attn.logsumexp(x, axis=None, keepdims=True).shape == (1, 1)
    np.testing.assert_allclose(attn.log_softmax(x, axis=None), x - total, rtol=1e-15)
    np.testing.assert_allclose(attn.softmax(x, axis=None), np.exp(x - total), rtol=1e-15)
    assert float(attn.entropy(np.full((2, 2), 0.25), axis=None)) == pytest.approx(math.log(4), rel=1e-15)
    with pytest.raises(ValueError, match="axis 3 is out of range for x"):
        attn.log_softmax(x, axis=3)
    with pytest.raises(TypeError, match="axis must be an integer or None"):
        attn.softmax(x, axis=1.0)
    with pytest.raises(ValueError, match="axis 5 is out of range for w"):
        attn.entropy(np.full((2, 2), 0.25), axis=5)
