"""(b) Start-up: ``python -c "import attn"`` against ``python -c "import numpy"`` (and an empty interpreter).

Each command runs as a fresh subprocess, interleaved round-robin so that
background load hits all three alike, after two warm-up rounds (disk cache).
"""
from __future__ import annotations

import subprocess
import sys
import time
from typing import Callable

from .timing import summary

COMMANDS = {
    "python -c pass": "pass",
    'python -c "import numpy"': "import numpy",
    'python -c "import attn"': "import attn",
}
ROUNDS = 20
QUICK_ROUNDS = 3
WARMUP = 2


def _once(code: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def steps(rounds: int = ROUNDS) -> int:
    return rounds


def run(rounds: int = ROUNDS, tick: Callable[[str], None] = lambda s: None) -> dict:
    for _ in range(WARMUP):
        for code in COMMANDS.values():
            _once(code)
    times = {label: [] for label in COMMANDS}
    for i in range(rounds):
        tick(f"start-up round {i + 1}")
        for label, code in COMMANDS.items():
            times[label].append(_once(code))
    rows = [{"command": label, **summary(ts), "times_s": ts} for label, ts in times.items()]
    med = {r["command"]: r["median_s"] for r in rows}
    attn_cmd, np_cmd = 'python -c "import attn"', 'python -c "import numpy"'
    return {
        "python": sys.executable,
        "rounds": rounds,
        "rows": rows,
        "attn_minus_numpy_ms": 1e3 * (med[attn_cmd] - med[np_cmd]),
        "attn_over_numpy": med[attn_cmd] / med[np_cmd],
    }
