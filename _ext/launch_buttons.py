"""Sphinx extension: launch buttons only for a repository that exists.

sphinx-book-theme builds the Binder button from ``repository.url`` (``_config.yml``). A placeholder there
sends readers to a repository that does not exist, so the URL comes from one place, in this order:

1. ``repository.url`` in ``_config.yml`` (the published repository, if the book's authors name one);
2. the git remote ``origin`` of the checkout being built, when it is a GitHub, GitLab or Bitbucket
   repository (what a hosting template that clones the repository sees); its default branch, if git
   knows it, replaces ``repository.branch``.

With neither, the launch buttons (and the repository buttons) are hidden: the theme's own launch code is
switched off, and the one thing it also did, offering the page's executed ``.ipynb`` for download, is
done here instead.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
PROVIDERS = ("github.com", "gitlab.com", "bitbucket.org")
LAUNCHERS = ("binderhub_url", "jupyterhub_url", "colab_url", "deepnote_url", "jupyterlite_url")
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button", "use_edit_page_button")


def web_url(remote: str) -> str | None:
    """The https URL of a git remote on a known host (``git@github.com:o/r.git`` -> ``https://github.com/o/r``)."""
    remote = remote.strip()
    m = (re.fullmatch(r"(?:ssh://)?git@([^:/]+)[:/]([^/\s]+)/([^/\s]+?)(?:\.git)?/?", remote)
         or re.fullmatch(r"(?:https?|git)://(?:[^@/]+@)?([^/]+)/([^/\s]+)/([^/\s]+?)(?:\.git)?/?", remote))
    if not m or m.group(1).lower() not in PROVIDERS:
        return None
    host, owner, name = m.groups()
    return f"https://{host.lower()}/{owner}/{name}"


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def repository(root: Path, configured_url: str, configured_branch: str) -> tuple[str | None, str]:
    """(repository URL or None, branch) for launch links: the configured URL, else the git remote origin."""
    if configured_url.strip():
        return configured_url.strip().rstrip("/"), configured_branch
    url = web_url(_git(root, "remote", "get-url", "origin"))
    if url is None:
        return None, configured_branch
    head = _git(root, "rev-parse", "--abbrev-ref", "origin/HEAD")  # e.g. origin/main
    return url, head.split("/", 1)[1] if head.startswith("origin/") else configured_branch


def _choose_repository(app, config):
    opts = config.html_theme_options
    url, branch = repository(Path(app.confdir), opts.get("repository_url", "") or "",
                             opts.get("repository_branch", "") or "main")
    app.attn_repository = url
    if url:
        opts["repository_url"], opts["repository_branch"] = url, branch
        return
    LOGGER.info("no repository URL (_config.yml repository.url, git remote origin): launch buttons hidden")
    opts["repository_url"] = ""
    for key in REPOSITORY_BUTTONS:
        opts[key] = False
    opts["launch_buttons"] = {k: ("" if k in LAUNCHERS else False if k == "thebe" else v)
                              for k, v in (opts.get("launch_buttons") or {}).items()}


def _offer_executed_notebook(app, pagename, templatename, context, doctree):
    """What the theme's launch code does for a MyST notebook, which no longer runs: its executed .ipynb
    goes to _sources/ and the download menu offers it."""
    if app.attn_repository or not context.get("sourcename", "").endswith((".md", ".md.txt")):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / (pagename + ".ipynb")
    if not executed.is_file():
        return
    target = Path(app.outdir) / "_sources" / (pagename + ".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, target)
    context["ipynb_source"] = pagename + ".ipynb"


def setup(app):
    app.connect("config-inited", _choose_repository)
    # before the theme's header buttons (priority 501) read context["ipynb_source"]
    app.connect("html-page-context", _offer_executed_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
