"""Glyph bitmaps rendered once per explorer canvas: matplotlib >= 3.11's Agg draws text glyph by glyph.

``RendererAgg._draw_text_glyphs_and_boxes`` (matplotlib 3.11) asks FreeType for every glyph of every
string at every draw, about 0.1 ms a glyph: a move that changes three short titles spends most of its
time there. A glyph's bitmap depends only on its font, size, glyph index, transform and the sub-pixel
part of its position (a whole-pixel shift moves the bitmap and nothing else), so it is rendered once
under that key and then placed, giving the same pixels. Only upright, antialiased text without rules
is taken this way; anything else, and a matplotlib without that method, is drawn as matplotlib does.
"""
from __future__ import annotations

import numpy as np

_MAX_GLYPHS = 4096  # bitmaps kept per renderer (a few kB each)


def cache_glyphs(renderer) -> None:
    """Make ``renderer`` (a ``RendererAgg``) render each glyph bitmap once; a no-op if already done or unsupported."""
    original = getattr(type(renderer), "_draw_text_glyphs_and_boxes", None)
    if original is None or "_draw_text_glyphs_and_boxes" in vars(renderer):
        return
    try:
        from matplotlib.backends.backend_agg import get_hinting_flag
        from matplotlib.ft2font import RenderMode
    except ImportError:
        return
    bitmaps: dict[tuple, tuple[np.ndarray, int, int]] = {}
    identity = [[0x10000, 0], [0, 0x10000]]

    def draw(gc, x, y, angle, glyphs, boxes):
        if angle or boxes or not gc.get_antialiased():
            return original(renderer, gc, x, y, angle, glyphs, boxes)
        glyphs = list(glyphs)
        if any(slant or extend != 1 for _, _, _, slant, extend, _, _ in glyphs):
            return original(renderer, gc, x, y, angle, glyphs, boxes)
        load_flags = get_hinting_flag()
        height = renderer.height
        for font, size, glyph_index, _, _, dx, dy in glyphs:  # dy is upwards; y is downwards
            tx, ty = round(0x40 * (x + dx)), round(0x40 * (height - y + dy))  # 26.6 fixed point, as matplotlib
            key = (font.fname, font.face_index, size, renderer.dpi, glyph_index, load_flags, tx & 0x3F, ty & 0x3F)
            hit = bitmaps.get(key)
            if hit is None:
                if len(bitmaps) >= _MAX_GLYPHS:
                    bitmaps.clear()
                font.set_size(size, renderer.dpi)
                font._set_transform(identity, [tx & 0x3F, ty & 0x3F])  # the sub-pixel part only
                bitmap = font._render_glyph(glyph_index, load_flags, RenderMode.NORMAL)
                hit = bitmaps[key] = (np.array(bitmap.buffer), bitmap.left, bitmap.top)
            buffer, left, top = hit
            left, top = left + (tx >> 6), top + (ty >> 6)  # the whole-pixel part
            renderer._renderer.draw_text_image(buffer, left, int(height) - top + buffer.shape[0], 0, gc)

    renderer._draw_text_glyphs_and_boxes = draw
