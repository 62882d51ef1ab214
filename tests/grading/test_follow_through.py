"""Follow-through marking (error carried forward): every honest route passes, a consequence of a wrong
earlier part is told so, and the tolerances carry the rounding the page asks for through each step."""
import os

import numpy as np
import pytest

os.environ["ATTN_GRADING_STRICT"] = "1"
os.environ["ATTN_PROGRESS"] = "off"

from attn.grading import CORRECT, NOT_YET, check, get_item, items  # noqa: E402
from routes import by_hand, for_every_seed  # noqa: E402

FIXED = [it.id for it in items() if not it.seeded and any(p.kind == "number" for p in it.parts)]
VARIANTS = [it.id for it in items() if it.seeded]
SEEDS = range(500)


def _all_pass(it, seed):
    hand = by_hand(it, seed)
    for name, value in hand.items():
        alone = it.judge(name, value, seed)  # the propagated tolerance alone accepts it
        assert alone.correct, (it.id, seed, name, str(alone))
        given = it.judge(name, value, seed, given=hand)  # and so does follow-through
        assert given.correct, (it.id, seed, name, str(given))
        if seed is None or seed < 50:  # as plain lists, the way a learner types them (a sample of seeds)
            listed = it.judge(name, value.tolist(), seed, given={k: v.tolist() for k, v in hand.items()})
            assert listed.correct, (it.id, seed, name, str(listed))


@pytest.mark.parametrize("item_id", FIXED)
def test_the_by_hand_route_passes_every_fixed_item(item_id):
    _all_pass(get_item(item_id), None)


@pytest.mark.parametrize("item_id", VARIANTS)
def test_the_by_hand_route_passes_every_variant_seed(item_id):
    for_every_seed(item_id, SEEDS, _all_pass)


def test_by_hand_route_really_differs_from_the_exact_answers():
    """The property above is not vacuous: rounded intermediates move B03's and V01's outputs past 0.01."""
    moved = 0
    for item_id, seed in [("B03", None), ("B04", None)] + [("V01", s) for s in range(20)]:
        it = get_item(item_id)
        hand = by_hand(it, seed)
        exact = it.expected(seed)["output"]
        moved += np.abs(hand["output"] - exact).max() > 0.01
    assert moved >= 3


# ----------------------------------------------------------------------------- accepted weights carry through
B03_WEIGHTS = [[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.79, 0.11, 0.11, 0], [0.13, 0.37, 0.37, 0.13]]


def test_b03_output_from_the_accepted_two_decimal_weights_is_correct():
    it = get_item("B03")
    V = it.context().V
    assert it.judge("weights", B03_WEIGHTS).correct
    out = np.array(B03_WEIGHTS) @ V
    assert np.abs(out - it.expected()["output"]).max() > 0.01  # the case needs the propagated tolerance
    assert it.judge("output", out).correct
    fb = check("B03", weights=B03_WEIGHTS, output=out)
    assert bool(fb), str(fb)
    assert "check the arithmetic" not in str(fb).lower()


def test_b04_output_from_the_accepted_two_decimal_weights_is_correct():
    it = get_item("B04")
    w = np.round(it.expected()["weights"], 2)
    out = w @ it.context().V
    assert it.judge("weights", w).correct and it.judge("output", out).correct
    assert bool(check("B04", weights=w, output=np.round(out, 2)))


def test_v01_seed_0_by_hand():
    it = get_item("V01")
    hand = by_hand(it, 0)
    assert bool(check("V01", seed=0, **hand)), str(check("V01", seed=0, **hand))


def test_an_output_that_follows_from_wrong_weights_says_fix_the_weights_first():
    it = get_item("B03")
    wrong = np.array(B03_WEIGHTS, dtype=float)
    wrong[2] = [0.5, 0.25, 0.25, 0.0]  # rows still sum to 1, but row 3 is not the softmax
    out = wrong @ it.context().V
    fb = it.judge("output", out, given={"weights": wrong, "mask": np.tril(np.ones((4, 4), bool))})
    assert fb.status == NOT_YET and fb.mistake == "follows_from_wrong", str(fb)
    assert "follows correctly from your `weights`" in fb.message and "fix it first" in fb.message, fb.message
    assert "arithmetic" not in fb.message


def test_follow_through_is_correct_given_accepted_weights_even_beyond_the_carried_tolerance():
    """Weights off by 0.0099 in one column (accepted: each row then sums to 1.0099, which rounding can explain)
    and the output computed from them exactly: correct, given the weights."""
    it = get_item("V01")
    tried = 0
    for seed in range(200):
        V = it.context(seed).V
        w = it.expected(seed)["weights"].copy()
        w[:, int(np.argmax(np.abs(V).sum(axis=1)))] += 0.0099  # the key whose value row moves the output most
        out = w @ it.context(seed).V
        if it.judge("output", out, seed).correct:
            continue  # within the carried tolerance anyway
        tried += 1
        assert it.judge("weights", w, seed).correct
        fb = it.judge("output", out, seed, given={"weights": w})
        assert fb.correct and "given your `weights`" in fb.message, str(fb)
    assert tried >= 3


def test_follow_through_cannot_be_forged_with_wrong_earlier_answers():
    it = get_item("B01")
    w = np.full((3, 3), 1 / 3)
    fb = it.judge("output", w @ it.context().V, given={"weights": w})
    assert fb.status == NOT_YET


def test_a_chain_of_follow_through_names_the_first_wrong_part():
    it = get_item("B01")
    S = it.expected()["scores"] + np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 0]])  # a wrong score
    W = np.round(np.exp(S) / np.exp(S).sum(1, keepdims=True), 2)
    fb = check("B01", scores=S, weights=W)
    assert fb["scores"].status == NOT_YET
    assert fb["weights"].mistake == "follows_from_wrong" and "`scores`" in fb["weights"].message


def test_tolerance_is_carried_through_the_linear_step():
    """weights rounded to 0.005 move an output entry by up to 0.005 Σ_j |V_jc| (plus the weights' own carry)."""
    it = get_item("B03")
    atol, _ = it.tolerance("output")
    V = it.context().V
    err_w = it.rounding_error("weights")  # 0.005, nothing carried from a boolean mask
    np.testing.assert_allclose(err_w, 0.005)
    want = 0.01 + 1e-9 + 0.005 * np.abs(V).sum(axis=0)[None, :] * np.ones((4, 1))
    np.testing.assert_allclose(atol, want, rtol=1e-5)


# ----------------------------------------------------------------------------- any honest precision
from hypothesis import given as given_, settings, strategies as st  # noqa: E402


@settings(max_examples=150, deadline=None)
@given_(item_id=st.sampled_from(["B01", "B03", "B04", "V01", "V03", "V04"]), seed=st.integers(0, 10_000),
        w_decimals=st.integers(2, 8), o_decimals=st.integers(2, 8))
def test_weights_to_any_precision_and_the_output_from_them_pass(item_id, seed, w_decimals, o_decimals):
    """Whatever precision (two decimals or more) the learner keeps, the output from their own weights passes."""
    it = get_item(item_id)
    seed = seed if it.seeded else None
    ns = it.context(seed)
    w = np.round(it.expected(seed)["weights"], w_decimals)
    out = np.round(w @ ns.V, o_decimals)
    assert it.judge("weights", w, seed).correct
    assert it.judge("output", out, seed).correct
    assert it.judge("output", out, seed, given={"weights": w}).correct
