"""A JupyterLab server from this environment, serving one folder on a free local port with no token.

Shared by the explorers' benchmark (benchmarks/explorers.py: Prop 1's explorer in a real JupyterLab) and the
JupyterLab browser test (tests/browser/test_lab_widgets.py). Imports only the standard library.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyterlab(folder: Path, *, env: dict[str, str] | None = None, start_timeout: float = 180.0) -> Iterator[str]:
    """Start ``jupyter lab`` on ``folder`` (its settings and workspaces kept inside ``folder``), yield its URL
    once ``/api/status`` answers, and stop it afterwards. Raises RuntimeError if it does not answer within
    ``start_timeout`` seconds (generous: a busy 2-core machine starts it in 5-30 s)."""
    folder = Path(folder)
    port = free_port()
    server_env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(folder / ".settings"),
                  "JUPYTERLAB_WORKSPACES_DIR": str(folder / ".workspaces"), **(env or {})}
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={folder}", "--allow-root"],
        env=server_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError(f"JupyterLab exited ({server.returncode}) before it answered") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not answer within {start_timeout:.0f} s") from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
