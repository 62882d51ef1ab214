"""Learner functions: a time limit, the learner's own failing line, and function parts judged on test cases."""
import threading
import time

import numpy as np

import attn
from attn.grading import NOT_TRIED, NOT_YET, Item, Mistake, Part
from attn.grading.run import call


def learner_divides_by_zero(x):
    y = x + 1
    return y / 0  # the learner's own failing line


def learner_loops_forever(x):
    while True:
        try:
            x = x + 1
        except Exception:  # a learner's catch-all must not swallow the time limit
            pass


def test_an_exception_shows_the_learners_line_not_the_checkers():
    out = call(learner_divides_by_zero, 1)
    assert out.error and not out.timed_out
    assert "ZeroDivisionError" in out.error and "return y / 0" in out.error
    assert "learner_divides_by_zero" in out.error
    assert "grading" not in out.error and "run.py" not in out.error


def test_an_exception_inside_numpy_points_at_the_learners_call():
    def learner(x):
        return np.reshape(x, (7, 7))
    out = call(learner, np.ones(3))
    assert "ValueError" in out.error and "np.reshape(x, (7, 7))" in out.error


def test_a_function_that_never_returns_is_stopped():
    t0 = time.perf_counter()
    out = call(learner_loops_forever, 0, seconds=0.3)
    assert out.timed_out and time.perf_counter() - t0 < 3


def test_the_time_limit_also_works_off_the_main_thread():
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("out", call(learner_loops_forever, 0, seconds=0.3)))
    t.start()
    t.join(5)
    assert box["out"].timed_out


def test_a_value_comes_back():
    assert call(lambda a, b=0: a + b, 2, b=3).value == 5


def _softmax_unstable(x):
    z = np.exp(np.asarray(x, dtype=float))
    return z / z.sum(axis=-1, keepdims=True)


ITEM = Item(  # not registered: a function part, as E01 declares one
    id="X01", title="softmax", page="exercises/none", kind="exercise",
    data=lambda rng: {},
    parts=[Part("softmax", expected=lambda ns: attn.softmax, kind="function", seconds=0.5,
                cases=lambda ns: [(np.array([[1.0, 2.0, 3.0]]),), (np.array([[1e4, 0.0, -1e4]]),)],
                mistakes=[Mistake("unstable", lambda ns: _softmax_unstable,
                                  "exp overflowed at large logits: subtract the row maximum first.")])],
)


def test_function_parts():
    assert ITEM.judge("softmax", attn.softmax).correct
    assert ITEM.judge("softmax", ...).status == NOT_TRIED
    fb = ITEM.judge("softmax", _softmax_unstable)
    assert fb.status == NOT_YET and fb.mistake == "unstable" and fb.message.startswith("On test 2 of 2")
    def learner_indexes_too_far(x):
        return x[0, 5]
    fb = ITEM.judge("softmax", learner_indexes_too_far)
    assert fb.mistake == "raised" and "IndexError" in fb.message and "return x[0, 5]" in fb.message
    fb = ITEM.judge("softmax", learner_loops_forever)
    assert fb.mistake == "timeout"
    assert ITEM.judge("softmax", lambda x: None).status == NOT_TRIED  # a stub: the empty answer cell

    def learner_forgets_return(x):
        x = x + 1
    fb = ITEM.judge("softmax", learner_forgets_return)
    assert fb.status == NOT_YET and "None" in fb.message
    assert ITEM.judge("softmax", lambda x: "text").status == NOT_YET
    assert ITEM.judge("softmax", 3).mistake == "type"
    fb = ITEM.judge("softmax", lambda x: np.exp(x) / np.exp(x).sum(axis=0, keepdims=True))
    assert fb.status == NOT_YET


def stub_ellipsis(Q, K, V):
    ...


def stub_pass_with_docstring(x):
    """Return the softmax of x."""
    pass


def stub_docstring_only():
    "todo"


def returns_none_explicitly(x):
    return None


def does_something(x):
    y = x + 1
    ...
    return y


def test_is_stub_reads_the_function_body_from_its_source():
    from attn.grading.run import is_stub

    assert is_stub(stub_ellipsis) and is_stub(stub_pass_with_docstring) and is_stub(stub_docstring_only)
    assert not is_stub(returns_none_explicitly)  # written by the learner: "returned None", not "not tried"
    assert not is_stub(does_something)
    assert is_stub(lambda x: None) and not is_stub(lambda x: x) and not is_stub(lambda x: ...)
    assert not is_stub(np.sum) and not is_stub(42)

    def nested(a, b=2):
        ...
    assert is_stub(nested)


def test_is_stub_without_source_compares_with_an_empty_function():
    from attn.grading.run import is_stub

    ns = {}
    exec(compile('def f(x):\n    ...\n\ndef d(x):\n    "doc"\n\ndef g(x):\n    return x + 1\n\n'
                 'def n(x):\n    return None\n\ndef s(x):\n    return "text"\n', "<no source>", "exec"), ns)
    assert is_stub(ns["f"]) and is_stub(ns["d"])
    assert not is_stub(ns["g"]) and not is_stub(ns["s"])


def test_is_stub_in_a_notebook_kernel():
    import jupytext
    import nbclient

    nb = jupytext.reads(
        "```{code-cell} ipython3\ndef attend(Q, K, V):\n    ...\n\ndef softmax(x):\n    return x\n"
        "\nfrom attn.grading.run import is_stub\nprint(is_stub(attend), is_stub(softmax))\n```\n",
        fmt="md:myst")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    assert nb.cells[0].outputs[0]["text"].strip() == "True False"
