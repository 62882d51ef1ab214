"""What the learner-copy maker adds to every copy: the glued numbers of the statement, the recording
cell after the imports and the progress table at the end (the book's pages carry none of it)."""
from pathlib import Path

import pytest

from attn.grading import get_item
import jupytext

from attn.grading import learner
from attn.grading.learner import PROGRESS_CELL, RECORD_CELL, glued_for_learner, render

ROOT = Path(__file__).resolve().parents[2]


def test_case_counts_are_the_items_own_counted_by_hand():
    # E01: 3 vectors/matrices at tau = 1 or 2 or 0.5, 2 with logits of ±1e4, 1 float32 (exercises.e01_cases)
    assert glued_for_learner("n_cases_E01_softmax") == "7" == str(len(get_item("E01").cases("softmax")))
    # E02: no mask, the page's mask, causal on 4 tokens, cross, large scores, float32 (exercises.e02_cases)
    assert glued_for_learner("n_cases_E02_scaled_dot_product_attention") == "6"


@pytest.mark.parametrize("name", ["e01_w1", "n_cases_E01", "p3_ratio:.2f"])
def test_a_number_only_the_book_computes_is_refused_by_name(name):
    with pytest.raises(ValueError, match="computed by the book only"):
        glued_for_learner(name)


@pytest.mark.parametrize("page, count", [("e01-softmax", "7"), ("e02-attention", "6")])
def test_the_learner_copy_shows_the_count_and_no_glue_role(page, count):
    text = render(ROOT / "exercises" / f"{page}.md", ROOT)
    assert "{glue" not in text
    assert f"on {count} " in text


@pytest.mark.parametrize("page", learner.pages(ROOT), ids=lambda p: p.stem)
def test_the_copy_records_from_the_start_and_ends_with_the_table_the_page_does_not(page):
    book = [c for c in jupytext.read(page).cells if c.cell_type == "code"]
    assert not [c for c in book if "record_progress" in c.source or c.source.strip() == "progress()"]
    cells = jupytext.reads(render(page, ROOT), fmt="md:myst").cells
    code = [c.source for c in cells if c.cell_type == "code"]
    first_import = next(i for i, s in enumerate(code) if "from attn.grading import" in s)
    assert code[first_import + 1] == RECORD_CELL and code.count(RECORD_CELL) == 1
    assert code[-1] == PROGRESS_CELL and "progress()" in cells[-2].source
    assert not cells[-1].metadata.get("tags")  # runs with the rest: nothing skipped


def test_a_page_that_never_imports_the_grader_is_an_error(tmp_path):
    (tmp_path / "exercises").mkdir()
    page = tmp_path / "exercises" / "x01.md"
    page.write_text("---\njupytext:\n  text_representation:\n    format_name: myst\n---\n\n# X\n\n"
                    "```{code-cell} ipython3\nimport numpy as np\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="imports from attn.grading"):
        render(page, tmp_path)
