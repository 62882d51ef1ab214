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


def _requirement_names(path):
    import re
    names = set()
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def test_the_lock_pins_every_requirement_and_was_written_from_the_current_ranges():
    import hashlib
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    lock = (root / "requirements.lock").read_text(encoding="utf-8")
    pins = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", lock, re.M))
    body = [ln for ln in lock.splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(pins) == len(body), "every line of requirements.lock is an exact pin"
    lowered = {k.lower().replace("_", "-") for k in pins}
    assert _requirement_names(root / "requirements.txt") <= lowered
    ranges = "".join(ln for ln in (root / "requirements.txt").read_text(encoding="utf-8").splitlines(True)
                     if not ln.startswith("-e "))
    recorded = re.search(r"^# From requirements.txt sha256 (\w+)$", lock, re.M).group(1)
    assert recorded == hashlib.sha256(ranges.encode()).hexdigest(), "requirements.txt changed: run bin/lock"


def test_this_environment_has_the_locked_versions():
    import re
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    lock = (Path(__file__).resolve().parents[2] / "requirements.lock").read_text(encoding="utf-8")
    wrong = {}
    for name, pinned in re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)", lock, re.M):
        try:
            got = version(name)
        except PackageNotFoundError:
            got = None
        if got != pinned:
            wrong[name] = (pinned, got)
    assert not wrong, f"(locked, installed) differ; run bin/setup: {wrong}"
