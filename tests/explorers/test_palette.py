"""The Okabe–Ito colours have one home, attn.palette: no other source file of the book spells one out."""
import re
from pathlib import Path

from attn import palette

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [*ROOT.glob("src/attn/**/*.py"), *ROOT.glob("src/attn/widgets/js/*"), *ROOT.glob("chapters/*.md"),
           *ROOT.glob("exercises/**/*.md"), *ROOT.glob("_ext/**/*.py"), *ROOT.glob("_ext/**/*.css"),
           *ROOT.glob("_ext/**/*.js"), *ROOT.glob("benchmarks/*.py"), ROOT / "intro.md"]


def test_palette_is_the_eight_okabe_ito_colours():
    assert sorted(palette.OKABE_ITO.values()) == sorted(
        ["#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"])
    for role in (palette.QKV, palette.SCALED, palette.UNSCALED, *palette.SERIES):
        assert role in palette.OKABE_ITO.values()


def test_no_source_spells_out_an_okabe_ito_colour():
    codes = [c for c in palette.OKABE_ITO.values() if c != "#000000"]
    pattern = re.compile("|".join(re.escape(c) for c in codes), re.IGNORECASE)
    found = [f"{p.relative_to(ROOT)}:{n}" for p in SOURCES if p.is_file() and p.name != "palette.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, f"use attn.palette instead of a hex code: {found}"


def test_name_of_gives_the_drawn_colour_and_rejects_others():
    assert palette.name_of(palette.BLOCKED) == "vermilion"
    assert palette.name_of(palette.NAIVE.lower()) == "blue"
    assert palette.name_of(palette.ORANGE) == "orange"
    assert {palette.name_of(c) for c in palette.OKABE_ITO.values()} == set(palette.OKABE_ITO)
    import pytest
    with pytest.raises(ValueError, match="colour="):
        palette.name_of("#123456")
