"""A bubblewrap sandbox per submission: what the learner's kernel may see, write and spend.

Built on `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``)
and util-linux's ``prlimit`` (and ``setpriv`` when the grader runs as root);
no home-made isolation. Inside the sandbox:

- the file system is empty except, read-only: ``/usr`` (and the ``/bin``,
  ``/lib`` links), ``/etc``, the Python installation, the virtual environment
  and the folder holding the ``attn`` package; read-write: the submission's own
  scratch folder (working folder, ``HOME``, ``/tmp``) and the kernel's socket
  folder. Other submissions, the grader's output and the teacher's files are
  not there at all;
- new PID, network, IPC and UTS namespaces: no network, no other process to
  see (``/proc`` is the sandbox's own, so not the grader's command line), and
  the whole tree dies with the sandbox (``--die-with-parent``; killing bwrap
  ends its PID namespace, setsid daemons included);
- limits (``prlimit``): address space, processes, file size, open files, core
  files off; and, where the grader may make one (as root, with the kernel's memory
  controller writable: :class:`MemoryGroup`), one memory cgroup for the whole sandbox, so
  that the address-space limit of each process cannot be multiplied by starting many;
- a clean environment (no variable of the grader's is passed).

As root, the kernel runs as an unprivileged user id of its own (``setpriv``),
because the kernel ignores the process limit for root, and a user namespace
maps its root to the real root.
"""
from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import attn


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 4096       # address space of each process; and of all of them, where a cgroup can be made
    processes: int = 128        # processes and threads (RLIMIT_NPROC)
    file_mb: int = 64           # the largest file the submission may write
    open_files: int = 256


class MemoryGroup:
    """One memory cgroup for every process of a sandbox (cgroup v1's memory controller, or v2's), made where the
    grader may (as root on most machines); else :attr:`path` is None and only the per-process limits hold.
    ``wrap(cmd)`` starts ``cmd`` inside it; :meth:`remove` deletes it once its processes are gone."""

    ROOTS = (Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup"))

    def __init__(self, limit_bytes: int):
        self.path = None
        for root in self.ROOTS:
            v2 = (root / "cgroup.controllers").is_file()
            limit = "memory.max" if v2 else "memory.limit_in_bytes"
            if not (root / ("cgroup.controllers" if v2 else limit)).is_file() or not os.access(root, os.W_OK):
                continue
            if v2 and "memory" not in (root / "cgroup.subtree_control").read_text():
                continue
            path = root / "attn-grade" / uuid.uuid4().hex
            try:
                path.parent.mkdir(exist_ok=True)
                if v2:
                    (path.parent / "cgroup.subtree_control").write_text("+memory")
                path.mkdir()
                (path / limit).write_text(str(limit_bytes))
                for swap, value in (("memory.swap.max", "0"), ("memory.memsw.limit_in_bytes", str(limit_bytes))):
                    if (path / swap).is_file():
                        try:
                            (path / swap).write_text(value)
                        except OSError:
                            pass
                self.path = path
                return
            except OSError:
                self.path = path
                self.remove()
                self.path = None

    def wrap(self, cmd: list[str]) -> list[str]:
        if self.path is None:
            return list(cmd)
        # the shell joins the group, then becomes cmd: bwrap and everything it starts are counted together
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *cmd]

    def remove(self, wait: float = 2.0) -> None:
        if self.path is None:
            return
        deadline = time.monotonic() + wait
        while True:  # the sandbox's processes take a moment to be reaped after it is killed
            try:
                self.path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        self.path = None


class NoSandbox(RuntimeError):
    """bubblewrap is missing or does not work here (the message says why and what to do)."""


def _which(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)


def check_available() -> None:
    """Raise :class:`NoSandbox` unless bwrap, prlimit (and setpriv as root) are here and bwrap runs."""
    import subprocess

    missing = [n for n in ("bwrap", "prlimit") + (("setpriv",) if os.geteuid() == 0 else ()) if not _which(n)]
    if missing:
        raise NoSandbox(f"{', '.join(missing)} not found: install the Debian packages bubblewrap and util-linux "
                        "(apt-get install bubblewrap), or pass --no-sandbox to run submissions unconfined")
    probe = Sandbox(Path("/nonexistent-scratch"), Path("/nonexistent-ipc")).command(["/bin/true"], probe=True)
    proc = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise NoSandbox(f"bwrap does not run here ({proc.stderr.strip()[:300]}); unprivileged user namespaces may be "
                        "off (sysctl kernel.unprivileged_userns_clone=1), or pass --no-sandbox")


def _read_only_roots() -> list[str]:
    """The folders the kernel needs to read: Python, the venv, the attn package's folder."""
    paths = {sys.prefix, sys.base_prefix, os.path.realpath(sys.base_prefix),
             str(Path(attn.__file__).resolve().parents[1])}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            paths.add(os.path.realpath(p))
    exe = os.path.realpath(sys.executable)
    paths.add(str(Path(exe).parent.parent))
    system = ("/usr", "/etc", "/bin", "/lib", "/lib64", "/sbin")
    keep = sorted(p for p in paths if p and os.path.isdir(p) and not p.startswith(system) and p != "/")
    return [p for p in keep if not any(p != q and p.startswith(q + os.sep) for q in keep)]  # outermost only


def visible_inside(paths) -> list[Path]:
    """The paths among ``paths`` that a sandbox can read (they lie in a folder bound into every sandbox)."""
    roots = [Path(r) for r in _read_only_roots()] + [Path(r) for r in ("/usr", "/etc")]
    out = []
    for p in paths:
        rp = Path(p).resolve()
        if any(rp == r or r in rp.parents for r in roots):
            out.append(Path(p))
    return out


class Sandbox:
    """The bwrap command for one submission: ``scratch`` is its only writable folder besides ``ipc_dir``."""

    def __init__(self, scratch: Path, ipc_dir: Path, limits: Limits = Limits()):
        self.scratch, self.ipc_dir, self.limits = Path(scratch), Path(ipc_dir), limits
        self.as_root = os.geteuid() == 0
        self.uid = 200_000 + os.getpid() % 60_000 if self.as_root else os.getuid()

    group: MemoryGroup | None = None

    def prepare(self) -> None:
        """Make the scratch and socket folders, owned by the sandbox's user."""
        for d in (self.scratch, self.scratch / "tmp", self.scratch / "home", self.ipc_dir):
            d.mkdir(parents=True, exist_ok=True)
            if self.as_root:
                os.chown(d, self.uid, self.uid)
            os.chmod(d, 0o700)

    def give(self, path: Path) -> None:
        """Let the sandbox's user read a file the grader wrote (the kernel's connection file)."""
        if self.as_root:
            os.chown(path, self.uid, self.uid)

    def command(self, cmd: list[str], probe: bool = False) -> list[str]:
        args = [_which("bwrap") or "bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent",
                "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for link in ("bin", "lib", "lib64", "sbin"):
            target = Path("/") / link
            if target.is_symlink():
                args += ["--symlink", os.readlink(target), str(target)]
            elif target.is_dir():
                args += ["--ro-bind", str(target), str(target)]
        # /tmp first: bwrap mounts in order, and a later mount hides what lies under it, so the read-only roots
        # (the venv, the attn package) must come after it, or a checkout under /tmp is invisible to the kernel
        args += ["--bind", str(self.scratch / "tmp"), "/tmp"] if not probe else ["--tmpfs", "/tmp"]
        made = {"/", "/tmp"}
        for root in _read_only_roots():
            for parent in reversed(Path(root).parents):
                if str(parent) not in made:
                    args += ["--dir", str(parent)]
                    made.add(str(parent))
            args += ["--ro-bind", root, root]
        args += ["--dev", "/dev", "--proc", "/proc"]
        if not probe:
            args += ["--bind", str(self.scratch), "/scratch",
                     "--dir", str(self.ipc_dir.parent), "--bind", str(self.ipc_dir), str(self.ipc_dir),
                     "--chdir", "/scratch"]
        args += ["--unsetenv", "JPY_PARENT_PID", "--setenv", "HOME", "/scratch/home"]
        if self.as_root:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-user"]
        L = self.limits
        args += ["--", _which("prlimit") or "prlimit", f"--as={L.memory_mb * 2**20}", f"--nproc={L.processes}",
                 f"--fsize={L.file_mb * 2**20}", f"--nofile={L.open_files}", "--core=0", "--"]
        if self.as_root:
            args += [_which("setpriv") or "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--"]
        args += list(cmd)
        if probe:
            return args
        if self.group is None:
            self.group = MemoryGroup(self.limits.memory_mb * 2**20)
        return self.group.wrap(args)

    def release(self) -> None:
        """Remove the memory group once the sandbox is killed."""
        if self.group is not None:
            self.group.remove()


def kernel_env(extra: dict | None = None) -> dict:
    """The kernel's whole environment: nothing of the grader's is passed on."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "IPYTHONDIR": "/scratch/home/.ipython", "MPLCONFIGDIR": "/scratch/home/.mpl", "MPLBACKEND": "agg",
        "ATTN_PROGRESS": "off", "ATTN_GRADING_STRICT": "0",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    }
    env.update(extra or {})
    return env
