"""The chapter is complete: every strand, the propositions and the apparatus at full count.

This reads the real book (the pages ``_toc.yml`` lists) through ``attn.book_index``, the same code the
strands page uses. It fails while a page of a strand is missing; the failure message says which.
"""
import pytest

from attn import book_index

LABELS = book_index.find_labels()
PROGRESS = book_index.written(LABELS)
FULL = {"basics": 11, "concept": 2, "theory": 4, "mathematics": 15, "practice": 9, "propositions": 5, "apparatus": 4}
SECTIONS = {sec.name: sec for sec in book_index.SECTIONS}


def test_totals_are_the_chapters():
    assert {name: sec.total for name, sec in SECTIONS.items()} == FULL


@pytest.mark.parametrize("name", list(FULL))
def test_section_is_complete(name):
    p, sec = PROGRESS[name], SECTIONS[name]
    found = [lab.name for lab in p.found]
    missing = [n for n in sec.expected if n not in LABELS]
    assert p.count == FULL[name], f"{name}: {p.fraction} written; found {found}; not yet written: {missing}"
    assert set(found) == set(sec.expected)


def test_every_strand_label_links_to_its_kind():
    """Definitions and propositions are sphinx-proof directives, linked with {prf:ref}; the rest are anchors."""
    for name in ("basics", "propositions"):
        for lab in PROGRESS[name].found:
            assert lab.role == "prf:ref", f"{lab.name} ({lab.docname}) should be a {{prf:...}} :label:"


def test_the_strands_pages_folded_code_fits_the_column_once_opened():
    """The strands page folds its code (hide-input): a reader who opens it must not need a scroll bar either.
    (tests/pages/test_code_width.py skips folded cells; an expert read found this one 925 px wide once opened.)"""
    import importlib.util
    from pathlib import Path

    here = Path(__file__).resolve()
    spec = importlib.util.spec_from_file_location("code_width", here.parent / "test_code_width.py")
    width = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(width)
    page = here.parents[2] / "chapters" / "strands.md"
    text = page.read_text(encoding="utf-8")
    assert ":tags: [hide-input]" in text
    unfolded = text.replace(":tags: [hide-input]", ":tags: [opened]")
    assert width.wide_lines(unfolded) == []
    assert width.wide_lines(unfolded.replace("# every label", "# " + "x" * 80 + "\n# every label"))  # it can fail
