r"""Auto-grading for the problem set: items, parts, known mistakes, hints, progress.

Imports NumPy only (jsonschema and jupytext are imported inside the functions
that need them); never matplotlib or ipywidgets.

For the learner
---------------
>>> from attn.grading import check, hint, progress, variant
>>> check("B01", "scores")          # checks the notebook variable `scores`
>>> check("B01")                    # every part of B01
>>> check("B01", "scores", S)       # an explicit value (or check("B01", scores=S))
>>> hint("B01")                     # the next hint (one more per call); hint("B01", 2) repeats hint 2
>>> v = variant("V01", 7); v        # a variant drawn from seed 7: shows its numbers
>>> v.check("weights")              # or check("V01", "weights", seed=7)
>>> progress()                      # a table of every item: not tried / not yet / correct

``check`` returns a :class:`Feedback` (one part) or a :class:`Report`
(several); both display as HTML in a notebook and as text elsewhere, and are
truthy only when correct. Anything else it returns (a :class:`Note`: a misuse,
an unknown item, the checker's own problem) is falsy. A wrong or junk answer (``...``, None, a string, a
ragged list, NaN, a wrong shape, a function that raises or never returns) is
*feedback*, never an exception. Messages name shapes and mistakes but never
print the expected array.

Declaring an item (for authors)
-------------------------------
An :class:`Item` has data, parts and hints; register it once at import time
(in :mod:`attn.grading.problems`, or a module imported by this package)::

    from attn.grading import Item, Part, Mistake, register
    import attn

    def data(rng):                     # rng: None for a fixed problem, a numpy Generator for a variant
        return {"Q": ..., "K": ..., "V": ...}

    register(Item(
        id="E02", title="Scaled dot-product attention with a mask", page="exercises/e02-attention",
        kind="exercise",               # "problem" (B..), "variant" (V.., needs a seed), "exercise" (E..)
        data=data,
        parts=[
            Part("scores",             # also the variable name the learner assigns in the notebook
                 expected=lambda ns: attn.scores(ns.Q, ns.K),   # computed by attn, never stored
                 what="the scores S, (T_q, T_k)",               # used in the wrong-shape message
                 decimals=2,           # accept anything within 0.01 (rounded or not); else atol/rtol
                 axes=("queries", "keys"),                      # what rows and columns are (transpose message)
                 mistakes=[Mistake("forgot_scale", lambda ns: ns.Q @ ns.K.T,
                                   "These are the raw dot products; divide by √d_k.")]),
            Part("weights", expected=lambda ns: attn.attention(ns.Q, ns.K, ns.V, mask=ns.mask).weights,
                 decimals=2,
                 uses=("scores",),                              # follow-through: computed from the scores
                 step=lambda ns, scores: attn.softmax(np.where(ns.mask, scores, -np.inf))),
        ],
        hints=["first hint", "second hint"],   # shown one at a time by hint("E02")
    ))

- A variant is an ``Item(kind="variant", of="B01", ...)`` whose ``data(rng)``
  draws its numbers from the ``numpy.random.Generator`` seeded by the learner's
  seed (small integers, so they stay pleasant by hand). Wrap the draw in
  ``problems._draw_until_distinct(rng, draw, parts)``: it redraws until no
  declared mistake coincides with the right answer, so every hint can be given.
  ``check("V01", ..., seed=7)`` / ``variant("V01", 7).check(...)``; progress is
  recorded under the variant's id, whatever the seed.
- ``ns`` (a ``SimpleNamespace``) holds the data and the expected answers of the
  parts declared *before* the current one, under their names.
- Follow-through (error carried forward): a part computed from earlier parts
  declares ``uses`` and ``step(ns, **earlier)`` (which must broadcast over a
  leading axis, or it is called entry by entry). Its tolerance is its own plus
  the earlier parts' rounding (half a unit in the decimals the page asks for)
  carried through ``step`` to first order (:meth:`Item.tolerance`), so the
  by-hand route with rounded intermediates passes; and ``check`` passes the
  learner's own earlier answers (``given``): an answer that follows from them is
  "correct, given your weights" when they are right, and otherwise told to fix
  them first. When those earlier answers are given and one is wrong, the
  carried tolerance does not make the part correct (only its own tolerance does).
- Honest routes: ``Part(routes=...)`` gives values a by-hand route reaches that
  the first-order carry does not cover (a softmax with 2-decimal exponentials,
  with or without the row maximum subtracted: :func:`problems.pencil_softmaxes`);
  each, and what later parts compute from it, is accepted within the part's own
  tolerance (:meth:`Item.honest`).
- Rows, columns and entries are counted in messages as the page counts them:
  from 1 for problems and variants, from 0 for exercises (``Item.counts_from``).
- ``Part(kind="mask")`` answers are boolean (0/1 accepted). ``rows_sum_to_one=True``
  adds the generic "rows do not sum to 1" / "normalised down columns" diagnoses.
- ``Part(kind="function", expected=lambda ns: reference_fn, cases=lambda ns: [(x,), (x, 0.5)], seconds=2)``:
  the learner's function is called on each case (arguments deep-copied) with a
  time limit (:func:`attn.grading.run.call`); an exception is reported at the
  learner's own failing line; its output is compared with ``reference_fn`` on
  the same case, and each ``Mistake.answer(ns)`` returns a *wrong function*
  (e.g. an unstable softmax) whose outputs, NaN included, identify the mistake.
- Order of judgement (:mod:`attn.grading.judge`): read the answer (junk →
  message); equal to the right answer within tolerance → correct; follows from
  the learner's earlier answers → correct or "fix those first"; equal to known
  mistakes → their hints (both, when two mistakes give the same array; those
  that coincide with the right answer for the item's numbers are skipped);
  wrong shape → both shapes named; then generic diagnoses that fire only when
  they are the one explanation (rounding, a transpose, the sign, all zeros, an
  integer that wrapped around, a constant factor); else what is observed (which
  rows do not sum to 1, how many entries are off and where the first one is).
- ``Item.judge(part, value, seed=None, given=None)`` gives the verdict without
  recording (``given``: the learner's answers to the other parts);
  ``Item.cases(part, seed)`` the argument tuples a function part is run on and
  ``Item.judge_outcomes(part, outcomes, seed)`` the verdict from outcomes
  computed elsewhere (one :class:`attn.grading.run.Outcome` per case, e.g. in a
  sandbox); ``Item.expected(seed)`` the right answers (for tests and graders);
  ``items()`` lists every registered item; ``get_item("B01")``.
- A function's NumPy RuntimeWarnings are caught while the checker runs it and
  become part of the feedback (``Outcome.warnings``), not noise in the cell.
- Modules: :mod:`~attn.grading.items` (the model and the registry),
  :mod:`~attn.grading.judge` (verdicts), :mod:`~attn.grading.learner_api`
  (``check``, ``hint``, ``variant``), :mod:`~attn.grading.progress_file` (the
  store; it does not import the registry at import time).
- Tests keep a table (item, part, wrong answer → expected mistake key) and
  run every row (``tests/grading/test_grading.py``).

Progress
--------
Recording is off unless :func:`record_progress` is called; the learner copies
(``exercises/learner/*.md``, generated by ``python -m attn.grading.learner``)
call it in a hidden-in-the-book, skipped-in-the-book cell, so building the book
never writes a progress file. The file is ``.attn-progress.json`` in the
notebook's folder, schema-checked (``progress_file.SCHEMA``), written atomically
under a file lock (``filelock``: two kernels in one folder keep every attempt);
a damaged one is renamed aside and reported, once; a kernel restarted without
its ``record_progress()`` cell is told to run it. ``ATTN_PROGRESS=off`` keeps
recording off whatever a notebook says (graders, tests). See
:mod:`attn.grading.progress_file`.

``ATTN_GRADING_STRICT=1`` makes a bug in the checker itself raise; otherwise it
is shown to the learner as a note ("not your mistake"), never as a traceback.

Book pages and learner copies
-----------------------------
In ``exercises/*.md``: cells tagged ``solution`` and everything between
``{solution-start}`` and ``{solution-end}`` are dropped from the learner copy;
cells tagged ``learner-only`` (also tagged ``remove-cell`` and
``skip-execution`` so the book neither shows nor runs them) are kept in the
learner copy with those tags removed. See :mod:`attn.grading.learner`.
"""
from . import problems as _problems  # noqa: F401  (registers B01–B05, V01–V04)
from . import exercises as _exercises  # noqa: F401  (registers E01–E10)
from .feedback import CORRECT, NOT_TRIED, NOT_YET, Feedback, Note, Report, Table
from .items import Item, Mistake, Part, Variant, check, get_item, hint, items, register, variant
from .learner_api import progress
from .progress_file import record_progress

# What ``from attn.grading import *`` gives a learner: the learner's API and the kinds of result it returns. The
# item model and the registry (Item, Part, Mistake, get_item, items, register) are imported by name where they
# are needed (the pages' own cells, the tests); a star import never hands a learner the expected answers.
__all__ = [
    "CORRECT",
    "NOT_TRIED",
    "NOT_YET",
    "Feedback",
    "Note",
    "Report",
    "Table",
    "Variant",
    "check",
    "hint",
    "progress",
    "record_progress",
    "variant",
]
