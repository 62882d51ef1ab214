"""What machine a benchmark ran on: CPU, cores, memory, NumPy, the BLAS kernel (threadpoolctl), date."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_bytes() -> dict[str, int | None]:
    """Total and currently available RAM in bytes (psutil, else /proc/meminfo)."""
    try:
        import psutil

        vm = psutil.virtual_memory()
        return {"total": int(vm.total), "available": int(vm.available)}
    except ImportError:
        info = {}
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                key, val = line.split(":", 1)
                info[key] = int(val.split()[0]) * 1024
        except OSError:
            pass
        return {"total": info.get("MemTotal"), "available": info.get("MemAvailable")}


def physical_cores() -> int | None:
    try:
        import psutil

        return psutil.cpu_count(logical=False)
    except ImportError:
        return None


def blas_info() -> list[dict]:
    """threadpoolctl's view of the BLAS NumPy loaded: library, version, kernel ("architecture"), threads."""
    import numpy  # noqa: F401  (loads the BLAS)
    from threadpoolctl import threadpool_info

    keep = ("user_api", "internal_api", "prefix", "version", "architecture", "threading_layer", "num_threads")
    return [{k: lib.get(k) for k in keep} for lib in threadpool_info()]


def git_commit() -> str | None:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        return sha or None
    except (OSError, subprocess.SubprocessError):
        return None


def describe(removed_env: dict[str, str] | None = None) -> dict:
    import numpy as np

    blas = blas_info()
    kernels = sorted({str(b.get("architecture")) for b in blas if b.get("user_api") == "blas"})
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": physical_cores(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_bytes": memory_bytes(),
        "load_average_1_5_15": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "numpy": np.__version__,
        "blas": blas,
        "blas_kernel": ", ".join(kernels) or "unknown",
        "blas_env_removed": removed_env or {},
        "blas_env_present": {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS_", "OMP_", "MKL_"))},
        "git_commit": git_commit(),
    }
