"""What Proposition 3's page states, kept as its second reader (s2) asked; the numbers themselves are asserted in
the page's hidden cells, these tests hold the words.

- Part 1 is stated under the condition an untied layer at initialisation meets (mean 0, identity covariance, the
  query independent of the key), not under independent entries, which that layer does not have.
- "The unscaled version gains a factor √d_k back; it is not enough" is argued with the upper bound and the matching
  lower bound e^{-Δ}/n² ≤ ‖J‖_F, and the gain is "a factor √d_k", not "linear".
- A quantity said to stay in a band over the widths is glued from every width, not from the last one.
- The book has two Mathematics pages: a reference names the one it means.
Also the apparatus: its local Jacobian helper, which takes logits, does not share its name with
``attn.softmax_jacobian``, which takes weights.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROP3 = ROOT / "chapters" / "prop3-scaling.md"
S2_PAGES = [ROOT / "chapters" / f"{p}.md" for p in ("prop3-scaling", "prop4-self-cross", "score-matrix",
                                                    "prop5-quadratic-cost", "apparatus")]


def _text(page: Path = PROP3) -> str:
    return " ".join(page.read_text(encoding="utf-8").split())


def _block(text: str, start: str, end: str = "```") -> str:
    i = text.index(start)
    return text[i:text.index(end, i + len(start))]


def test_part1_is_stated_under_the_condition_an_untied_layer_meets():
    text = _text()
    prop = _block(text, "{prf:proposition} Without the divisor")
    assert "identity covariance" in prop and "independent of every key" in prop
    assert "entries are mutually independent, each with mean 0" not in prop  # the old, stronger hypothesis
    assert "Part 1 describes a layer whose queries and keys are made with independent matrices" not in text
    # the page says what the untied layer meets and what it does not
    assert "It does not have independent entries, and part 1 does not ask for them" in text
    proof = _block(text, "{prf:proof}")
    assert r"\delta_{ab}" in proof and "independent with mean 0 and variance 1, so" not in proof


def test_the_chain_rule_objection_is_answered_with_both_bounds():
    section = _block(_text(), "### Does the chain rule rescue the unscaled softmax?", "```{code-cell}")
    assert "the gain only linear" not in section and r"a factor of about $\sqrt{d_k}$" in section
    assert r"\frac{e^{-\Delta(z)}}{n^2}" in section and r"J_{j^*j^*}" in section


def test_a_band_over_the_widths_is_glued_from_every_width():
    text = _text()
    assert "stays near {glue:text}`p3_jac_s_1" not in text and "stays near {glue:text}`p3_maxw_s_1024" not in text
    assert "between {glue:text}`p3_jac_s_band`" in text and "between {glue:text}`p3_maxw_s_band`" in text
    assert re.search(r"p3_jac_s_band=band\(curves\[\"jac_norm_scaled\"\]\)", text)
    assert re.search(r"p3_maxw_s_band=band\(curves\[\"max_weight_scaled\"\]\)", text)


def test_a_mathematics_page_is_named_by_its_title():
    """There are two Mathematics pages: "Mathematics I: the softmax ..." and "Mathematics II: the attention ..."."""
    for page in S2_PAGES:
        assert not re.search(r"\bthe Mathematics page\b", _text(page)), page.name


def test_the_apparatus_helper_does_not_borrow_the_package_name():
    text = (ROOT / "chapters" / "apparatus.md").read_text(encoding="utf-8")
    assert not re.search(r"^def softmax_jacobian\(", text, re.M)
    assert re.search(r"^def jacobian_at_logits\(x\):", text, re.M)
    assert "derivatives.softmax_jacobian(attn.softmax(x))" in text  # the package's, given the weights
