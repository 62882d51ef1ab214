"""What the book's pages share: the idioms every chapter and exercise page would otherwise repeat.

Imports only the standard library and NumPy at module level; myst-nb (the book's notebook
engine) is imported inside the functions that need it, so ``import attn.page`` stays light.
"""
from __future__ import annotations

import re

import numpy as np

__all__ = ["agreement", "glue_values", "plain_value"]

# A glued name is used inside a role, {glue:text}`name:.2f`: no colon, backtick or space.
_GLUE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


def plain_value(value):
    """Return ``value`` with NumPy numbers made plain Python numbers, everything else unchanged.

    A NumPy scalar (``np.float32``, ``np.int64``, ``np.bool_``, ...) or a 0-d array becomes the
    Python ``float``, ``int``, ``bool`` or ``complex`` of the same value (``.item()``: float16 and
    float32 widen exactly to a Python float). Python numbers, strings, ``IPython.display`` objects,
    figures and arrays of one or more dimensions are returned as they are: a Python ``int`` stays
    an ``int`` (it is never turned into a float), so a glued count prints as ``7``, not ``7.0``.
    """
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        return value.item()
    return value


def glue_values(**values):
    """Glue each keyword argument under its name, with nothing shown where the cell runs.

    ``glue_values(p3_ratio=r, n_cases=len(cases))`` is ``myst_nb.glue(name, value, display=False)``
    for each name, in the order given, after :func:`plain_value`; the page shows the value with
    ``{glue:text}`name:.2f``` (or ``{glue:md}``, ``{glue:figure}``). Names that are not Python
    identifiers (built in a loop) go in through a dict: ``glue_values(**{f"w{j}": w[j]})``.

    Raises
    ------
    TypeError
        If no values are given (a call that glues nothing is a mistake in the page).
    ValueError
        If a name is not usable in a ``{glue:...}`` role: it must start with a letter or ``_``
        and hold only letters, digits, ``_`` and ``-`` (no colon, backtick or space); the message
        names the offending name.

    Source: myst-nb's ``glue`` (https://myst-nb.readthedocs.io/en/latest/render/glue.html).
    """
    if not values:
        raise TypeError("glue_values() needs at least one name=value to glue")
    for name in values:
        if not _GLUE_NAME.match(name):
            raise ValueError(
                f"glue_values(): name {name!r} cannot be used in a {{glue:...}} role; use letters, "
                "digits, '_' and '-', starting with a letter or '_'")
    from myst_nb import glue  # the notebook engine, only where a page runs

    for name, value in values.items():
        glue(name, plain_value(value), display=False)


def agreement(gap, fmt: str = ".0e") -> str:
    """Words for how closely two computations agree, to be glued into a sentence such as "they agree {...}".

    ``agreement(0.0)`` is ``"exactly"``; ``agreement(2.2e-16)`` is ``"to within 2e-16"`` (``fmt`` formats the
    gap). A reader sees "exactly" where the difference is 0, never "0.0e+00".

    Raises
    ------
    ValueError
        If ``gap`` is negative or not finite (a difference is reported as a size, ``abs(a - b).max()``).
    """
    gap = float(plain_value(gap))
    if not np.isfinite(gap) or gap < 0:
        raise ValueError(f"agreement(): gap must be a finite size >= 0, got {gap!r}")
    return "exactly" if gap == 0 else f"to within {gap:{fmt}}"
