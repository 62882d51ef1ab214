"""The set-up makes JupyterLab open MyST .md files as notebooks, in this environment only."""
import os
import sys

from jupyterlab_server.settings_utils import _get_overrides


def test_jupytext_is_the_default_viewer_for_markdown_in_this_environment():
    settings_dir = os.path.join(sys.prefix, "share", "jupyter", "lab", "settings")
    overrides, error = _get_overrides(settings_dir)
    assert not error
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook"
    assert viewers["myst"] == "Jupytext Notebook"
