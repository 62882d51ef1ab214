"""The book's colours, declared once: the Okabe–Ito palette and the roles its colours play.

Okabe & Ito (2008), *Color Universal Design*: eight colours that stay distinct with the common
forms of colour-blindness. Every figure, explorer and page takes its colours from here: matplotlib
through these names, the live explorers' ES modules through their ``live_data()`` (never a hex code
of their own). Colour maps are viridis and cividis (the browser tests check that). Plain strings:
``import attn.palette`` imports nothing.

Light and dark mode: these colours are drawn on the figure's own white background (PNG) or, in the
live explorers, over the page's background with text in the theme's colour (``js/explorer.css``);
the page's own colours for dark mode are ``_ext/offline_book_static/attn-palette.css``.
"""
from __future__ import annotations

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
GREEN = "#009E73"  #: bluish green
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"  #: reddish purple

OKABE_ITO: dict[str, str] = {
    "black": BLACK, "orange": ORANGE, "sky blue": SKY_BLUE, "green": GREEN,
    "yellow": YELLOW, "blue": BLUE, "vermilion": VERMILLION, "purple": PURPLE,
}



def name_of(colour: str) -> str:
    """The English name of one of the palette's colours, for captions and alt texts.

    ``colour`` is a hex code such as ``palette.BLOCKED`` (any case); the name is the key of
    ``OKABE_ITO``, e.g. ``name_of(BLOCKED) == "vermilion"``. Raises ``ValueError`` naming
    ``colour`` when it is not one of the eight.
    """
    for name, code in OKABE_ITO.items():
        if isinstance(colour, str) and code.lower() == colour.lower():
            return name
    raise ValueError(f"colour={colour!r} is not in the Okabe–Ito palette: {sorted(OKABE_ITO.values())}")


# -- roles: one colour per thing, the same on every page -----------------------------------------
SERIES: tuple[str, ...] = (BLUE, ORANGE, GREEN, PURPLE, SKY_BLUE)  #: items in order: keys, tokens, curves
#: q, k and v arrows (Proposition 2): the text's colour, told apart by dash pattern and label, because
#: the tokens there take SERIES and a colour must not mean a token in one panel and q, k or v in another
QKV = BLACK
SCALED, UNSCALED = BLUE, VERMILLION  #: scores with and without the 1/√d_k divisor (Proposition 3)
NAIVE, BLOCKED = BLUE, VERMILLION  #: naive and blocked attention (Proposition 5)

__all__ = ["BLACK", "BLOCKED", "BLUE", "GREEN", "NAIVE", "OKABE_ITO", "ORANGE", "PURPLE", "QKV",
           "SCALED", "SERIES", "SKY_BLUE", "UNSCALED", "VERMILLION", "YELLOW", "name_of"]
