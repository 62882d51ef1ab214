"""One learner's kernel, started in its sandbox, driven cell by cell with time limits and capped output.

jupyter_client does the talking (IPC transport: its sockets are files in a
folder bound into the sandbox). A cell past its time limit gets an interrupt
request; a cell that ignores it is killed with its whole sandbox and the
caller restarts a kernel. Printed output is counted and dropped (only the
grader's last cell keeps its text, up to a cap), so a notebook that prints
600 MB costs the grader nothing but the time.
"""
from __future__ import annotations

import os
import queue
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client import KernelManager

from .sandbox import Limits, Sandbox, kernel_env

MAX_MESSAGE = 64 * 2**20   # bytes: a larger message from the kernel is dropped by ZeroMQ
OUTPUT_CAP = 2 * 2**20     # printed characters kept from the grader's own cell


@dataclass
class CellResult:
    status: str                # "ok", "error", "timeout" (interrupted), "killed" (ignored the interrupt), "dead"
    ename: str = ""
    evalue: str = ""
    stdout: str = ""
    printed: int = 0           # characters printed (kept or not)
    capped: bool = False


class _SandboxedManager(KernelManager):
    sandbox: Sandbox | None = None

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if self.sandbox is None:
            return cmd
        self.sandbox.give(Path(self.connection_file))
        return self.sandbox.command(cmd)


@dataclass
class Kernel:
    """A kernel for one submission: ``sandboxed`` (bwrap) unless the teacher chose otherwise."""

    sandboxed: bool = True
    limits: Limits = field(default_factory=Limits)
    startup_timeout: float = 60.0

    def __post_init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="attn-grade-"))
        os.chmod(self.root, 0o755)
        self.scratch = self.root / "scratch"
        self.ipc_dir = self.root / "ipc"
        self.km = self.kc = None
        self.sandbox = None
        self.starts = 0

    def start(self) -> None:
        sandbox = Sandbox(self.scratch, self.ipc_dir, self.limits)
        sandbox.prepare()
        km = _SandboxedManager(transport="ipc", ip=str(self.ipc_dir / "k"),
                               connection_file=str(self.ipc_dir / f"kernel-{self.starts}.json"))
        km.kernel_name = "python3"
        km.kernel_cmd = []
        if self.sandboxed:
            km.sandbox = self.sandbox = sandbox
            env = kernel_env()
        else:  # --no-sandbox: the same clean environment, with real paths
            home = self.scratch / "home"
            env = kernel_env({"HOME": str(home), "IPYTHONDIR": str(home / ".ipython"),
                              "MPLCONFIGDIR": str(home / ".mpl"), "TMPDIR": str(self.scratch / "tmp")})
        km.start_kernel(env=env, cwd=str(self.scratch), extra_arguments=[],
                        stdout=open(os.devnull, "wb"), stderr=open(os.devnull, "wb"), stdin=open(os.devnull, "rb"))
        self.starts += 1
        kc = km.client()
        import zmq

        kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)  # every socket made from now on: a larger message is dropped
        kc.start_channels()
        self.km, self.kc = km, kc
        kc.wait_for_ready(timeout=self.startup_timeout)
        # the notebook's own folder would be its cwd; IPython's history off (a file nobody reads)
        self.execute("import sys as _s; _s.path.insert(0, '')", 30)

    def alive(self) -> bool:
        return self.km is not None and self.km.is_alive()

    def kill(self) -> None:
        """Kill the sandbox (and, with it, every process the notebook started)."""
        if self.kc is not None:
            try:
                self.kc.stop_channels()
            except Exception:  # noqa: BLE001
                pass
        if self.km is not None:
            try:
                self.km.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001
                pass
            try:
                self.km.cleanup_resources()
            except Exception:  # noqa: BLE001
                pass
        if self.sandbox is not None:
            self.sandbox.release()
            self.sandbox = None
        self.km = self.kc = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def _reconnect(self) -> None:
        try:
            self.kc.stop_channels()
        except Exception:  # noqa: BLE001
            pass
        kc = self.km.client()
        kc.start_channels()
        self.kc = kc
        kc.wait_for_ready(timeout=self.startup_timeout)

    def _interrupt(self) -> None:
        msg = self.kc.session.msg("interrupt_request", content={})
        self.kc.control_channel.send(msg)

    def execute(self, code: str, timeout: float, keep_stdout: bool = False, grace: float = 3.0,
                keep_limit: int = OUTPUT_CAP) -> CellResult:
        """Run one cell; interrupt it at ``timeout`` seconds, kill the kernel ``grace`` seconds later."""
        kc = self.kc
        msg_id = kc.execute(code, silent=False, store_history=False, allow_stdin=False, stop_on_error=False)
        deadline = time.monotonic() + timeout
        interrupted = False
        res = CellResult("ok")
        out: list[str] = []
        kept = 0
        idle = False
        reply = None
        drain_until = None
        while not idle:
            now = time.monotonic()
            if reply is not None and now >= drain_until:
                # the reply came but not the end of the output: a message over MAX_MESSAGE was dropped, and
                # ZeroMQ cut the output channel; new channels to the same kernel (its state is kept)
                res.capped = True
                self._reconnect()
                break
            if reply is None and now >= deadline:
                if interrupted:
                    self.kill()
                    res.status = "killed"
                    return res
                interrupted = True
                try:
                    self._interrupt()
                except Exception:  # noqa: BLE001
                    pass
                deadline = now + grace
                continue
            try:
                msg = kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                msg = None
            if msg is None or reply is None:
                try:
                    r = kc.get_shell_msg(timeout=0)
                    if r.get("parent_header", {}).get("msg_id") == msg_id:
                        reply, drain_until = r, time.monotonic() + 2.0
                except queue.Empty:
                    if msg is None and not self.km.is_alive():
                        res.status = "dead"
                        return res
            if msg is None or msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            t, c = msg["msg_type"], msg["content"]
            if t == "stream":
                text = c.get("text", "")
                res.printed += len(text)
                if keep_stdout and c.get("name") == "stdout" and kept < keep_limit:
                    out.append(text[: keep_limit - kept])
                    kept += len(out[-1])
                if res.printed > OUTPUT_CAP:
                    res.capped = True
            elif t == "error":
                res.ename, res.evalue = str(c.get("ename", ""))[:200], str(c.get("evalue", ""))[:500]
            elif t == "status" and c.get("execution_state") == "idle":
                idle = True
        end = time.monotonic() + 10
        while reply is None and time.monotonic() < end:
            try:
                r = kc.get_shell_msg(timeout=1)
            except queue.Empty:
                if not self.km.is_alive():
                    res.status = "dead"
                    return res
                continue
            if r.get("parent_header", {}).get("msg_id") == msg_id:
                reply = r
        if reply is None:
            res.status = "dead"
            return res
        res.stdout = "".join(out)
        content = reply.get("content", {})
        if content.get("status") == "error":
            res.ename = res.ename or str(content.get("ename", ""))[:200]
            res.evalue = res.evalue or str(content.get("evalue", ""))[:500]
            res.status = "timeout" if interrupted and res.ename == "KeyboardInterrupt" else "error"
        elif content.get("status") == "aborted":
            res.status = "error"
            res.ename = res.ename or "Aborted"
        elif interrupted:
            res.status = "timeout"  # it finished in the grace period: still past its limit
        return res
