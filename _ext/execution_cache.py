"""Sphinx extension: key the notebook execution cache on the attn package's source as well as the page.

With ``execute_notebooks: cache`` myst-nb replays a page's outputs from jupyter-cache when the page's
code cells are unchanged. But every page imports ``attn`` (and Prop 5's reads the benchmark results),
which that key cannot see: after an edit to ``src/attn`` the cache would replay outputs the new code no
longer produces, and Sphinx would not even re-read a page whose ``.md`` did not change. So a hash of
what the pages read besides their own text (``DEPENDS``) becomes part of the key:

* a config value that Sphinx keeps in its environment (``rebuild="env"``): when the hash changes,
  Sphinx re-reads every page;
* a stamp in the cache folder: when it differs from the hash, the cache is emptied before any page is
  read, so every page is executed afresh.

When nothing changed, no page is re-read nor executed (a rebuild takes seconds). A clean build
(``bin/build-book --clean``, what CI runs) has no cache to trust in the first place.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
# What the pages' code reads besides the page itself, relative to the book's root (glob patterns).
DEPENDS = ("src/attn/**/*.py", "benchmarks/*.py", "benchmarks/results/latest.json")
STAMP = "attn-source-hash"


def source_hash(root: Path, patterns=DEPENDS) -> str:
    """sha256 over the relative path and bytes of every file matching ``patterns`` under ``root``."""
    digest = hashlib.sha256()
    for pattern in patterns:
        for path in sorted(p for p in root.glob(pattern) if p.is_file() and "__pycache__" not in p.parts):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def invalidate_if_changed(cache: Path, key: str) -> bool:
    """Empty the jupyter-cache folder ``cache`` unless it was filled under ``key``; return True if emptied."""
    stamp = cache / STAMP
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == key:
        return False
    emptied = cache.exists()
    if emptied:
        shutil.rmtree(cache)
    cache.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key + "\n", encoding="utf-8")
    return emptied


def create_database(cache: Path) -> Path:
    """Create jupyter-cache's database in ``cache`` now, once, in Sphinx's main process; return its file.

    Left to the parallel readers (``-j auto``), each worker finding no database creates one, and two at
    once fail the build with "table settings already exists" (seen on a clean build)."""
    from jupyter_cache import get_cache

    engine = get_cache(cache).db  # creates cache/global.db and its tables
    engine.dispose()  # no connection carried into the forked readers
    return cache / "global.db"


def _set_key(app, config):
    config.attn_source_hash = source_hash(Path(app.confdir), config.attn_execution_depends)


def _check_cache(app):
    nb_config = getattr(app.env, "mystnb_config", None)
    if nb_config is None or nb_config.execution_mode != "cache":
        return
    if invalidate_if_changed(Path(nb_config.execution_cache_path), app.config.attn_source_hash):
        LOGGER.info("execution cache emptied: src/attn (or the benchmark results) changed since it was filled")
    create_database(Path(nb_config.execution_cache_path))


def setup(app):
    app.add_config_value("attn_execution_depends", list(DEPENDS), "env")
    app.add_config_value("attn_source_hash", "", "env")
    app.connect("config-inited", _set_key)
    app.connect("builder-inited", _check_cache, priority=900)  # after myst-nb has set the cache's path
    return {"parallel_read_safe": True, "parallel_write_safe": True}
