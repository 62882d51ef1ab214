"""What a reader does on a static page: step a scrubber (the picture must change, with no kernel) and
unfold an exercise's solution (folded until clicked). Done during each page's visit (browsing.py)."""
import pytest

from browsing import PAGES


@pytest.mark.parametrize("name", PAGES)
def test_scrubbers_change_the_picture(visit, name):
    for s in visit(name).scrubbers:
        assert s["frames"] >= 2, f"{name}: scrubber {s['index']} has a single frame: nothing to scrub"
        assert s["next_changes"], f"{name}: scrubber {s['index']}: 'Next frame' did not change the picture"
        if s["frames"] >= 3:
            assert s["end_changes"], f"{name}: scrubber {s['index']}: moving the slider to its end did not change the picture"


def test_the_book_has_live_explorers(reports):
    counts = {name: r.controls.get("explorers", 0) for name, r in reports.items()}
    if len(reports) < 10:
        pytest.skip("only some pages visited (-k)")
    assert sum(counts.values()) >= 7, f"the live explorers are missing from the book: {counts}"


@pytest.mark.parametrize("name", PAGES)
def test_solutions_are_folded_until_clicked(visit, name):
    for s in visit(name).solutions:
        assert s["dropdown"], f"{name}: solution {s['title']!r} is not folded: give it `:class: dropdown`"
        assert s["folded"], f"{name}: solution {s['title']!r} shows its content before a click"
        assert s["opens"], f"{name}: solution {s['title']!r} does not open when its title is clicked"


def test_the_book_has_folded_solutions(reports):
    found = {n: len(r.solutions) for n, r in reports.items() if n.startswith("exercises/")}
    assert sum(found.values()) >= 1, f"no sphinx-exercise solution in the exercise pages: {found}"
