"""Interactive explorers for the chapter's pages (matplotlib + ipywidgets, imported here, not by ``import attn``).

Each explorer declares its controls once (``live_controls``) and owns one matplotlib ``Figure`` (the
static figures of the pages) with an ``update(**params)`` that changes its artists in place. It gives
- ``explorer.widget()``: the live explorer (anywidget, ``attn.widgets.live``), drawn and computed in the
  browser, in JupyterLab and on the built web page alike (no kernel needed); in JupyterLab Python learns
  each new state and recomputes it with attn (``explorer.params``, ``explorer.result``);
- ``explorer.png_widget()``: ipywidgets controls and a PNG the kernel redraws (the earlier JupyterLab widget);
- ``explorer.scrubber(name, values)``: a kernel-free matplotlib animation over one parameter.
"""
from .base import Explorer

__all__ = ["Explorer"]
