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
