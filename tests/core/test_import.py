"""`import attn` pulls in NumPy only: no plotting or widget library (they load only with attn.widgets).

Each check runs in a fresh interpreter, since this test process may already
have imported matplotlib for other tests.
"""
import json
import subprocess
import sys

import pytest

HEAVY = ("matplotlib", "ipywidgets", "IPython", "myst_nb", "tqdm", "threadpoolctl")


def modules_after(code: str) -> set[str]:
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import attn",
        "import attn; [getattr(attn, name) for name in attn.__all__]",
        "import attn.blocked, attn.cost",
    ],
)
def test_import_attn_loads_no_plotting_or_widget_library(code):
    loaded = modules_after(code)
    assert "numpy" in loaded and "attn" in loaded
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert not heavy, f"`{code}` imported {heavy}; move that import into a submodule that needs it"
