"""softmax_inplace: the softmax attention computes in the score matrix's own memory."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn.softmax import softmax, softmax_inplace

finite_rows = arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 9)),
                     elements=st.floats(-1e4, 1e4, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(x=finite_rows, tau=st.floats(0.05, 20.0))
def test_same_values_as_softmax_in_the_same_memory(x, tau):
    work = x.copy()
    out = softmax_inplace(work, tau=tau)
    assert out is work
    np.testing.assert_allclose(out, softmax(x, tau=tau), rtol=1e-12, atol=1e-300)
    # and an independent reference: exp(x/τ) normalised, in exact-enough float arithmetic
    shifted = (x - x.max(axis=-1, keepdims=True)) / tau
    ref = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-300)


def test_hand_computed_row():
    x = np.array([[0.0, np.log(3.0)]])  # weights 1/4, 3/4
    np.testing.assert_allclose(softmax_inplace(x), [[0.25, 0.75]], rtol=1e-15)


@pytest.mark.parametrize("bad, message", [(np.nan, "NaN at index \\(1, 2\\)"), (np.inf, "\\+inf at index \\(1, 2\\)")])
def test_nan_and_plus_inf_are_named_and_x_is_left_alone(bad, message):
    x = np.zeros((3, 4))
    x[1, 2] = bad
    before = x.copy()
    with pytest.raises(ValueError, match=message):
        softmax_inplace(x)
    np.testing.assert_array_equal(x, before)


def test_a_fully_masked_row_is_refused():
    x = np.array([[0.0, 1.0], [-np.inf, -np.inf]])
    with pytest.raises(ValueError, match="entirely -inf"):
        softmax_inplace(x)


def test_float32_stays_float32():
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    out = softmax_inplace(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-6)


@pytest.mark.parametrize("bad", [np.arange(3), [[0.0, 1.0]]])
def test_non_float_arrays_are_refused_with_a_pointer_to_softmax(bad):
    with pytest.raises(TypeError, match="use softmax"):
        softmax_inplace(bad)
