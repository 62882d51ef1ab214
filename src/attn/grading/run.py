"""Running a learner's function safely: a time limit, and errors shown at the learner's own line.

``call(fn, *args, seconds=2.0, **kwargs)`` returns an :class:`Outcome`: the
value, or ``error`` (a kind sentence naming the exception and the learner's
failing line, never the checker's internals), or ``timed_out``.

The time limit uses ``SIGALRM`` when called from the main thread of a Unix
process (a notebook kernel runs cells there), which stops a runaway Python
loop. Elsewhere the function runs in a daemon thread that is abandoned after
the limit (it cannot be stopped, but the learner gets the message at once).
"""
from __future__ import annotations

import os
import signal
import sysconfig
import threading
import traceback
import warnings
from typing import Any, NamedTuple

from .stub import is_stub


class Outcome(NamedTuple):
    value: Any = None
    error: str | None = None  # a message for the learner when the function raised
    timed_out: bool = False
    warnings: tuple = ()  # NumPy RuntimeWarnings the function raised, as one-line messages


class _TimeUp(BaseException):
    """Raised by the alarm; a BaseException so that a learner's ``except Exception`` cannot swallow it."""


_ATTN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIB_DIRS = tuple(
    {os.path.abspath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
                                  sysconfig.get_paths().get("platlib")) if p}
)


def _is_learner_frame(filename: str) -> bool:
    f = os.path.abspath(filename) if not filename.startswith("<") else filename
    if f.startswith(_ATTN_DIR + os.sep):
        return False
    return not any(f.startswith(d + os.sep) for d in _LIB_DIRS)


def describe_exception(exc: BaseException) -> str:
    """One or two sentences: the exception, and the last line of the learner's own code in its traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [fr for fr in frames if _is_learner_frame(fr.filename)]
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if mine:
        fr = mine[-1]
        line = (fr.line or "").strip()
        where = f" in `{fr.name}`" if fr.name not in ("<module>", "") else ""
        code = f": `{line}`" if line else ""
        return f"Your function raised {what}, at line {fr.lineno}{where}{code}."
    return f"Your function raised {what}."


def _runtime_warnings(caught) -> tuple:
    """The distinct RuntimeWarnings (NumPy's overflow, divide by zero, ...) as one-line messages; others re-issued."""
    out = []
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            text = str(w.message)
            if text not in out:
                out.append(text)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return tuple(out)


def _alarm_usable() -> bool:
    return hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()


def call(fn, *args, seconds: float = 2.0, **kwargs) -> Outcome:
    """Call ``fn(*args, **kwargs)`` with a time limit; never raises (except KeyboardInterrupt).

    RuntimeWarnings the function raises (NumPy's "overflow encountered in exp")
    are caught, not printed, and returned in ``Outcome.warnings``.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _call(fn, args, kwargs, seconds)
    found = _runtime_warnings(caught)
    return out._replace(warnings=found) if found else out


def _call(fn, args, kwargs, seconds) -> Outcome:
    if _alarm_usable():
        def _ring(signum, frame):
            raise _TimeUp()

        previous = signal.signal(signal.SIGALRM, _ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return Outcome(value=fn(*args, **kwargs))
        except _TimeUp:
            return Outcome(timed_out=True)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # SystemExit from a learner's exit() is feedback too
            return Outcome(error=describe_exception(exc))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    box: dict = {}

    def _target():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:
            box["error"] = describe_exception(exc)

    t = threading.Thread(target=_target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        return Outcome(timed_out=True)
    if "error" in box:
        return Outcome(error=box["error"])
    return Outcome(value=box.get("value"))


__all__ = ["Outcome", "call", "describe_exception", "is_stub"]
