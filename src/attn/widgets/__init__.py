"""Interactive explorers for the chapter's pages (matplotlib + ipywidgets, imported here, not by ``import attn``).

Each explorer owns one matplotlib ``Figure`` and an ``update(**params)`` that changes the data of
its existing artists in place. The same object gives
- ``explorer.widget()``: live ipywidgets controls for JupyterLab (needs a kernel), and
- ``explorer.scrubber(name, values)``: a kernel-free matplotlib animation over one parameter,
  for the built book, where a saved slider would move but redraw nothing.
"""
from .base import Explorer

__all__ = ["Explorer"]
