"""The teachers' runner: grade a class's notebooks where the submissions cannot reach the verdicts.

Modules, one job each:

- :mod:`.sandbox`: the bubblewrap sandbox and its limits;
- :mod:`.kernel`: a kernel in its sandbox, cell by cell, with time limits, interrupts, kills and capped output;
- :mod:`.kernel_side`: the grader's last cell, run in the learner's kernel: hands values over, runs function
  parts in a forked time-limited child;
- :mod:`.collect`: reading that hand-over as hostile data and judging it in the grader's process;
- :mod:`.notebook`: reading a submission, its items, the learner's name and the flags;
- :mod:`.grade`: one file to rows; :mod:`.rows`: rows, CSV, journal; :mod:`.report`: the class report;
- :mod:`.cli`: ``attn-grade`` (parallel, resumable, optionally on Dask).
"""
from .cli import main

__all__ = ["main"]
