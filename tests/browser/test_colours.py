"""Colour maps that colour-blind readers can read: the pages and widgets use only perceptually uniform,
colour-vision-deficiency-safe maps (viridis family, cividis, single-hue or grey ramps), never jet,
rainbow, hsv or a red-green diverging map. Checked in the source, where a page author sees it."""
import re

import pytest

from book import ROOT

SAFE = {
    "viridis", "cividis", "magma", "inferno", "plasma", "gray", "grey", "Greys", "binary", "gist_yarg",
    "Blues", "Purples", "Oranges", "Greens", "Reds", "YlOrBr", "YlGnBu", "PuBu", "BuPu", "PuOr", "BrBG", "RdBu",
    "coolwarm",
}
PATTERNS = [
    r"cmap\s*=\s*[\"']([A-Za-z_]+)[\"']",
    r"(?:colormaps|cm)\[\s*[\"']([A-Za-z_]+)[\"']\s*\]",
    r"get_cmap\(\s*[\"']([A-Za-z_]+)[\"']",
    r"\bcm\.([A-Za-z_]+)\b(?!\()",
    r"rcParams\[\s*[\"']image\.cmap[\"']\s*\]\s*=\s*[\"']([A-Za-z_]+)[\"']",
]
SOURCES = sorted([*ROOT.glob("chapters/**/*.md"), *ROOT.glob("exercises/**/*.md"), *ROOT.glob("src/attn/**/*.py")])


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_colour_maps_are_colour_blind_safe(path):
    text = path.read_text(encoding="utf-8")
    used = {m.group(1) for pat in PATTERNS for m in re.finditer(pat, text)}
    used = {name.removesuffix("_r") for name in used} - {"ScalarMappable", "get_cmap", "colors", "cmap"}
    bad = sorted(used - SAFE)
    assert not bad, f"{path.relative_to(ROOT)} uses colour map(s) {bad}: use viridis, cividis or a single-hue map"
