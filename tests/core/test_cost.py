"""attn.cost: the measurement helpers behind Proposition 5 (no timing assertions: memory is deterministic)."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attn.cost import (
    FixedPlusLinear,
    LogLogFit,
    Measurement,
    fit_fixed_plus_linear,
    fit_loglog_slope,
    measure,
    measure_attention,
    measure_score_matrix,
)


def test_fit_recovers_a_power_law_by_hand():
    # y = 3 x²: log y = log 3 + 2 log x exactly
    x = [1, 2, 4, 8]
    fit = fit_loglog_slope(x, [3, 12, 48, 192])
    assert isinstance(fit, LogLogFit)
    assert fit.slope == pytest.approx(2.0, abs=1e-12)
    assert np.exp(fit.intercept) == pytest.approx(3.0, rel=1e-12)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(fit.predict([16]), [768.0], rtol=1e-12)


@given(st.floats(-3, 3), st.floats(0.01, 100), st.lists(st.floats(0.1, 1e4), min_size=2, max_size=8, unique=True))
def test_fit_is_exact_on_any_power_law(b, c, xs):
    xs = np.array(xs)
    if np.ptp(np.log(xs)) < 1e-3:
        return  # nearly equal x: the slope is ill-conditioned
    fit = fit_loglog_slope(xs, c * xs**b)
    assert fit.slope == pytest.approx(b, abs=1e-6)


@pytest.mark.parametrize(
    "x, y, match",
    [
        ([1, 2], [1], "same length"),
        ([[1, 2]], [[1, 2]], "1-D"),
        ([1], [1], "at least two"),
        ([1, 0], [1, 2], r"x\[1\] = 0.0"),
        ([1, 2], [1, -2], r"y\[1\] = -2.0"),
        ([1, 2], [1, np.nan], "finite"),
        ([3, 3], [1, 2], "all x are equal"),
    ],
)
def test_fit_errors(x, y, match):
    with pytest.raises(ValueError, match=match):
        fit_loglog_slope(x, y)


def test_fixed_plus_linear_by_hand():
    # 4.5 MB fixed plus 256 bytes per token, the shape of the benchmark's blocked peaks
    T = np.array([2048, 4096, 8192, 16384, 32768])
    fit = fit_fixed_plus_linear(T, 4.5e6 + 256 * T)
    assert isinstance(fit, FixedPlusLinear)
    assert fit.fixed == pytest.approx(4.5e6, rel=1e-9) and fit.per_unit == pytest.approx(256, rel=1e-9)
    assert fit.crossover == pytest.approx(4.5e6 / 256)
    np.testing.assert_allclose(fit.predict(T), 4.5e6 + 256 * T, rtol=1e-9)
    # one log-log line through a fixed part plus a linear one comes out below 1; the local slope rises to 1
    assert fit_loglog_slope(T, fit.predict(T)).slope < 0.6
    local = fit.local_slope([1e3, 1e4, 1e5, 1e7])
    assert np.all(np.diff(local) > 0) and np.all(local < 1) and local[-1] > 0.99
    assert fit.local_slope(fit.crossover) == pytest.approx(0.5)
    assert FixedPlusLinear(1.0, 0.0).crossover == float("inf")


@pytest.mark.parametrize("x, y, match", [([1, 2], [1], "same length"), ([1], [1], "at least two"),
                                         ([1, 2], [1, np.inf], "finite"), ([3, 3], [1, 2], "all x are equal")])
def test_fixed_plus_linear_errors(x, y, match):
    with pytest.raises(ValueError, match=match):
        fit_fixed_plus_linear(x, y)


def test_measure_returns_one_row_per_T():
    m = measure(lambda Q, K, V: Q @ K.T, [4, 8, 16], d_k=3, repeats=2)
    assert isinstance(m, Measurement)
    assert m.T.tolist() == [4, 8, 16]
    assert m.seconds.shape == m.peak_bytes.shape == m.score_bytes.shape == (3,)
    assert (m.seconds > 0).all() and (m.peak_bytes >= 0).all()
    assert m.score_bytes.tolist() == [4 * 4 * 8, 8 * 8 * 8, 16 * 16 * 8]


def test_score_matrix_memory_is_quadratic():
    m = measure_score_matrix([256, 512, 1024], d_k=16, repeats=1)
    assert (m.peak_bytes >= m.score_bytes).all()  # at least the (T, T) matrix itself
    assert (m.peak_bytes <= 3 * m.score_bytes).all()  # and not much more
    assert fit_loglog_slope(m.T, m.peak_bytes).slope == pytest.approx(2.0, abs=0.15)


def test_naive_memory_quadratic_blocked_linear():
    Ts = [256, 512, 1024, 2048]
    naive = measure_attention(Ts, d_k=16, repeats=1)
    blocked = measure_attention(Ts, d_k=16, repeats=1, blocked=True, block_size=64)
    assert fit_loglog_slope(naive.T, naive.peak_bytes).slope == pytest.approx(2.0, abs=0.15)
    assert fit_loglog_slope(blocked.T, blocked.peak_bytes).slope == pytest.approx(1.0, abs=0.15)
    assert blocked.peak_bytes[-1] < naive.peak_bytes[-1] / 10


def test_measure_leaves_an_outer_trace_running():
    tracemalloc.start()
    try:
        measure_score_matrix([8], repeats=1)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


def test_score_matrix_bytes():
    from attn import score_matrix_bytes  # one definition, in attn.cost

    assert score_matrix_bytes(32768, 32768, np.float32) == 4 * 2**30  # 32768² float32 entries: 4 GiB
    assert score_matrix_bytes(3, 5, np.float64) == 120


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        (dict(T_values=[]), ValueError),
        (dict(T_values=[0, 4]), ValueError),
        (dict(T_values=[2.5]), TypeError),
        (dict(T_values=[4], repeats=0), ValueError),
        (dict(T_values=[4], d_k=0), ValueError),
    ],
)
def test_measure_errors(kwargs, exc):
    with pytest.raises(exc):
        measure_score_matrix(**kwargs)


def test_measured_blocked_attention_takes_all_queries_at_once(monkeypatch):
    """Proposition 5's page says its blocked measurement tiles the keys only, all queries in one block."""
    import attn.cost as cost

    seen = {}
    real = cost.blocked_attention

    def recording(Q, K, V, **kwargs):
        seen.update(kwargs)
        return real(Q, K, V, **kwargs)

    monkeypatch.setattr(cost, "blocked_attention", recording)
    measure_attention([16], d_k=4, repeats=1, blocked=True, block_size=8)
    assert seen == {"block_size": 8, "query_block_size": None}


# ---------------------------------------------------------------- other orders of the same steps
@pytest.mark.parametrize("T_q, T_k, d_k, d_v", [(3, 3, 4, 4), (2, 5, 3, 6), (5, 2, 7, 1)])
def test_other_orders_change_only_the_terms_outside_the_two_products(T_q, T_k, d_k, d_v):
    """Proposition 5: another order of the same steps keeps 2 T_q T_k (d_k + d_v) and moves the rest, by terms
    that can carry d_k or d_v (T_q d_k, T_q d_v) but never a factor T_q T_k d_k or T_q T_k d_v."""
    from attn.cost import FLOP_ORDERS, count_attention_flops, score_flops

    rng = np.random.default_rng(T_q + 10 * T_k + 100 * d_k)
    Q, K, V = rng.normal(size=(T_q, d_k)), rng.normal(size=(T_k, d_k)), rng.normal(size=(T_k, d_v))
    pairs = T_q * T_k
    expected = {"textbook": (pairs, 4 * pairs), "scale queries": (T_q * d_k, 4 * pairs),
                "reciprocal": (pairs, 4 * pairs + T_q), "normalise output": (pairs, 3 * pairs + T_q * d_v)}
    assert set(expected) == set(FLOP_ORDERS)
    from attn import attention

    reference = attention(Q, K, V).output
    for order, (scale_ops, softmax_ops) in expected.items():
        out, counted = count_attention_flops(Q, K, V, order=order)
        np.testing.assert_allclose(out, reference, rtol=1e-12, atol=1e-12)
        assert counted.scores == 2 * pairs * d_k and counted.weighted_sum == 2 * pairs * d_v, order
        assert (counted.scale, counted.softmax) == (scale_ops, softmax_ops), order
    assert count_attention_flops(Q, K, V)[1] == score_flops(T_q, T_k, d_k, d_v)


def test_an_unknown_order_is_refused():
    from attn.cost import count_attention_flops

    with pytest.raises(ValueError, match="order"):
        count_attention_flops([[1.0]], [[1.0]], [[1.0]], order="fastest")
