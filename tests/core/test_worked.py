"""attn.worked: the routes the variant pages show, checked against hand computations and the grader's data."""
import math
import re

import numpy as np
import pytest

from attn.grading import get_item
from attn.worked import attention_route, causal_route, temperature_route

B01_Q = np.array([[1, 0, 1, 0], [0, 2, 0, 0], [1, 1, 1, 1]], dtype=float)
B01_K = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [2, 0, 0, 0]], dtype=float)
B01_V = np.array([[1, 0], [0, 2], [2, 1]], dtype=float)


def test_attention_route_of_b01_query_1_by_hand():
    text = attention_route(0, B01_Q, B01_K, B01_V)
    # q1 = (1, 0, 1, 0): dots 1, 1, 2; /√4 = 0.5, 0.5, 1
    assert "q_1\\cdot k_1 = 1\\cdot1 + 0\\cdot1 + 1\\cdot0 + 0\\cdot0 = 1$" in text
    assert "$s_{13} = 1$" in text and "\\sqrt{d_k} = 2$" in text
    # the largest score, 1, subtracted first: e^(0.5 - 1), e^(0.5 - 1), e^0
    e = [math.exp(-0.5), math.exp(-0.5), 1.0]
    w = [x / sum(e) for x in e]
    assert "Subtract the largest score, 1, first" in text
    assert f"$e^{{s_{{11}} - 1}} \\approx {e[0]:.4f}$" in text and "$e^{s_{13} - 1} = 1$" in text
    assert f"add up to {sum(e):.4f}" in text
    assert f"$w_{{13}} \\approx {w[2]:.2f}$" in text
    o = [w[0] * 1 + w[2] * 2, w[1] * 2 + w[2] * 1]
    assert f"\\approx ({o[0]:.2f}, {o[1]:.2f})$" in text


def test_temperature_route_by_hand():
    text = temperature_route(np.array([2.0, 1.0, 0.0]), (0.5, 1.0, 2.0))
    lines = [line for line in text.split("\n") if line.startswith("- ")]
    assert len(lines) == 3 and text.startswith("The largest score is 2;")
    e = [1.0, math.exp(-2), math.exp(-4)]  # the largest score subtracted first: (s - 2) / 0.5
    assert f"sum {sum(e):.4f}" in lines[0] and f"are {e[0] / sum(e):.2f}," in lines[0]
    assert "$e^{(2 - 2)/0.5} = 1$" in lines[0] and f"$e^{{(0 - 2)/0.5}} \\approx {e[2]:.4f}$" in lines[0]


def test_temperature_route_keeps_the_numbers_paper_sized():
    """Reader s5, finding 9: e^(4/0.25) ≈ 8886110.5 at V02 seed 93; with the largest score subtracted first every
    exponential is at most 1, on every seed of the variant."""
    for seed in range(300):
        ns = get_item("V02").context(seed)
        text = temperature_route(ns.s, ns.taus)
        shown = [float(x) for x in re.findall(r"\\approx (\d+\.\d+)\$", text)]
        assert shown and max(shown) <= 1.0, (seed, text)
        assert not re.search(r"\d{3,}\.\d{4}", text), (seed, text)  # no exponential in the hundreds or more
    ns = get_item("V02").context(93)
    assert list(ns.s) == [4, 2, 3] and ns.taus == (0.25, 1.0, 4.0)
    first = temperature_route(ns.s, ns.taus).split("\n")[2]
    assert "$e^{(4 - 4)/0.25} = 1$" in first and "\\approx 0.0003$" in first and "\\approx 0.0183$" in first


def test_causal_route_rows_read_only_the_past():
    S = np.array([[1, 2, 0, 1], [1, 1, 2, 0], [2, 0, 0, 1], [0, 1, 1, 0]], dtype=float)
    V = np.array([[2, 0], [0, 2], [1, 1], [4, 0]], dtype=float)
    lines = causal_route(S, V).split("\n")
    assert lines[0].startswith("- Row 1 reads key 1 only: scores 1, weights 1.00;")
    assert lines[1].startswith("- Row 2 reads keys 1 to 2: ")
    assert "\\approx (2.00, 0.00)$" in lines[0]
    assert "scores 1, 1; less the largest, 1, their exponentials 1, 1 (sum 2.0000), weights 0.50, 0.50" in lines[1]
    e = math.exp(-2)  # row 3: scores 2, 0, 0 less 2
    assert f"exponentials 1, {e:.4f}, {e:.4f} (sum {1 + 2 * e:.4f}), weights 0.79, 0.11, 0.11" in lines[2]
    assert "\\approx (1.68, 0.32)$" in lines[2]


@pytest.mark.parametrize("seed", range(10))
def test_routes_quote_the_variants_answers(seed):
    it = get_item("V04")
    ns = it.context(seed)
    text = "\n\n".join(attention_route(i, ns.Q, ns.K, ns.V) for i in range(len(ns.Q)))
    for i, row in enumerate(ns.output):
        assert "(" + ", ".join(f"{x:.2f}" for x in row) + ")$" in text
    assert not re.search(r"nan|inf", text)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="i must index a row of Q"):
        attention_route(3, B01_Q, B01_K, B01_V)
    with pytest.raises(ValueError, match="taus"):
        temperature_route(np.array([1.0, 0.0]), (1.0, 0.0))
    with pytest.raises(ValueError, match="S must be"):
        causal_route(np.ones((2, 3)), np.ones((2, 2)))


@pytest.mark.parametrize("item_id", ["V01", "V03", "V04"])
def test_every_route_subtracts_the_largest_score_first(item_id):
    """The kind of finding 9 on the other routes: no exponential above 1 (V01's scores reach 8, e^8 ≈ 2981)."""
    for seed in range(200):
        ns = get_item(item_id).context(seed)
        if item_id == "V03":
            text = causal_route(ns.S, ns.V)
            shown = [float(x) for m in re.findall(r"exponentials ([\d., ]+) \(sum", text) for x in m.split(", ")]
        else:
            text = "\n\n".join(attention_route(i, ns.Q, ns.K, ns.V) for i in range(len(ns.Q)))
            shown = [float(x) for x in re.findall(r"\} \\approx (\d+\.\d+)\$", text)]
        assert shown and max(shown) <= 1.0, (item_id, seed, text)


def test_even_rows_text_names_no_row_one_row_or_several():
    from attn.worked import even_rows_text

    none = even_rows_text([[1.0, 0.0, 2.0], [0.5, 0.0, 0.0]])
    assert none.startswith("No row of $S$ has all 3 scores equal") and "1/3" in none
    one = even_rows_text([[1.0, 0.0, 2.0], [0.5, 0.5, 0.5]])
    assert one.startswith("Row 2 has equal scores throughout") and "all 1/3" in one  # counted from 1
    several = even_rows_text([[2.0, 2.0], [1.0, 0.0], [0.0, 0.0]])
    assert several.startswith("Rows 1 and 3 have equal scores") and "all 1/2" in several
    # the weights bear the sentence out: a row of equal scores weighs every key 1/T_k
    from attn import softmax

    w = softmax(np.array([[0.5, 0.5, 0.5]]))
    assert np.array_equal(w, np.full((1, 3), 1 / 3))
    with pytest.raises(ValueError):
        even_rows_text([[np.nan, 0.0]])
