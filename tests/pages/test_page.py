"""attn.page: the idioms the book's pages share (glue_values)."""
import json
import subprocess
import sys

import numpy as np
import pytest
import myst_nb.ext.glue
from myst_nb.ext.glue import GLUE_PREFIX

from attn.page import glue_values, plain_value


@pytest.fixture
def published(monkeypatch):
    """What myst-nb's glue hands to IPython's display: one (mimebundle, metadata) per call."""
    calls = []
    monkeypatch.setattr(myst_nb.ext.glue, "ipy_display", lambda bundle, raw, metadata: calls.append((bundle, metadata)))
    return calls


def glued(calls):
    """{name: text/plain} for each glued value, checking it was glued without display."""
    out = {}
    for bundle, metadata in calls:
        assert metadata["scrapbook"]["mime_prefix"] == GLUE_PREFIX  # display=False
        assert all(key.startswith(GLUE_PREFIX) for key in bundle)
        out[metadata["scrapbook"]["name"]] = bundle[GLUE_PREFIX + "text/plain"]
    return out


def test_glues_each_value_by_name_in_order_without_display(published):
    glue_values(a=0.5, n_rows=7, label="three tokens", **{"w-1": 2.25})
    assert list(glued(published).items()) == [("a", "0.5"), ("n_rows", "7"), ("label", "'three tokens'"),
                                               ("w-1", "2.25")]


def test_numpy_numbers_are_glued_as_plain_python_numbers(published):
    glue_values(f32=np.float32(0.1), f16=np.float16(0.1), f64=np.float64(1 / 3), i64=np.int64(7),
                u8=np.uint8(255), flag=np.bool_(True), zero_d=np.array(2.5))
    assert glued(published) == {
        "f32": repr(float(np.float32(0.1))),  # 0.10000000149011612: float32 widened exactly
        "f16": repr(float(np.float16(0.1))),  # 0.0999755859375
        "f64": "0.3333333333333333",
        "i64": "7",
        "u8": "255",
        "flag": "True",
        "zero_d": "2.5",
    }


def test_plain_value_keeps_types_that_are_not_numpy_numbers():
    assert type(plain_value(np.float32(0.25))) is float and plain_value(np.float32(0.25)) == 0.25
    assert type(plain_value(np.int32(-3))) is int and plain_value(np.int32(-3)) == -3
    assert type(plain_value(np.bool_(False))) is bool
    assert type(plain_value(7)) is int  # a Python int is not turned into a float
    arr = np.arange(3.0)
    assert plain_value(arr) is arr
    assert plain_value("x") == "x"


def test_values_built_in_a_loop_go_in_through_a_dict(published):
    for j in range(3):
        glue_values(**{f"w{j + 1}": np.float64(j / 4)})
    assert glued(published) == {"w1": "0.0", "w2": "0.25", "w3": "0.5"}


@pytest.mark.parametrize("name", ["a:b", "two words", "1st", "", "tick`", "p3.ratio"])
def test_a_name_a_glue_role_cannot_hold_is_an_error_naming_it(published, name):
    with pytest.raises(ValueError, match=repr(name).replace(".", r"\.")):
        glue_values(**{name: 1.0})
    assert published == []  # nothing glued, not even the valid names before it


def test_gluing_nothing_is_an_error():
    with pytest.raises(TypeError, match="at least one"):
        glue_values()


def test_import_attn_page_does_not_import_the_notebook_engine():
    probe = "import attn.page, json, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "attn.page" in loaded
    assert not [m for m in loaded if m.split(".")[0] in ("myst_nb", "IPython", "matplotlib")]


def test_agreement_says_exactly_for_zero_and_the_gap_otherwise():
    from attn.page import agreement

    assert agreement(0.0) == "exactly" and agreement(np.float32(0)) == "exactly"
    # the bound is rounded up: "to within 2e-16" would be false of 2.2e-16
    assert agreement(2.2e-16) == "to within 3e-16"
    assert agreement(2.220446049250313e-16, ".1e") == "to within 2.3e-16"
    assert agreement(0.0123, ".2f") == "to within 0.02"
    assert agreement(3e-16) == "to within 3e-16"  # shown exactly: not raised


@pytest.mark.parametrize("fmt", [".0e", ".1e", ".2e", ".1f", ".3f", ".2g", ".0f"])
def test_a_printed_bound_is_never_below_what_it_bounds(fmt):
    from attn.page import agreement, upper_bound

    rng = np.random.default_rng(0)
    values = np.concatenate([10.0 ** rng.uniform(-17, 3, 400), [9.96e-16, 0.995, 9.5, 1e-12, 2.5e-16]])
    for v in values:
        text = upper_bound(v, fmt)
        assert float(text) >= v, (v, fmt, text)
        # and it is the shortest such: one unit of the last digit less would be below v (or the format's own)
        assert text == f"{v:{fmt}}" or float(f"{v:{fmt}}") < v
        assert agreement(v, fmt) == f"to within {text}"


def test_upper_bound_refuses_what_is_no_number():
    from attn.page import upper_bound

    with pytest.raises(ValueError, match="finite"):
        upper_bound(float("inf"))
    with pytest.raises(ValueError, match="plain number"):
        upper_bound(0.5, "%")


@pytest.mark.parametrize("bad", [-1e-16, float("nan"), float("inf")])
def test_agreement_refuses_a_gap_that_is_not_a_size(bad):
    from attn.page import agreement

    with pytest.raises(ValueError, match="gap"):
        agreement(bad)

# -- show_explorer: the "move it yourself" idiom ---------------------------------------------------

from html.parser import HTMLParser  # noqa: E402

from attn.page import EXPLORER_NOTE_SHARED, explorer_note_html, show_explorer  # noqa: E402
from attn.widgets.base import Explorer  # noqa: E402


def explorer_classes():
    import attn.widgets.divisor, attn.widgets.projections, attn.widgets.quadratic  # noqa: E401
    import attn.widgets.temperature, attn.widgets.weighted_average, attn.widgets.wiring  # noqa: E401

    def walk(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from walk(sub)
    return sorted({c for c in walk(Explorer) if c.__module__.startswith("attn.")}, key=lambda c: c.__name__)


class Tags(HTMLParser):
    """Checks that every opened tag is closed, in order; collects the visible text."""

    def __init__(self):
        super().__init__()
        self.open, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, f"</{tag}> closes nothing"

    def handle_data(self, data):
        self.text.append(data)


def visible_text(html):
    parser = Tags()
    parser.feed(html)
    parser.close()
    assert parser.open == [], f"unclosed tags {parser.open}"
    return "".join(parser.text)


class FakeExplorer:
    live_usage = "Move <i>τ</i>."

    def widget(self):
        return "the widget"


@pytest.fixture
def shown(monkeypatch):
    import IPython.display

    out = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs: out.extend(objs))
    return out


def test_show_explorer_shows_the_widget_then_its_note(shown):
    assert show_explorer(FakeExplorer()) is None  # nothing for the cell to display a second time
    assert shown[0] == "the widget"
    import IPython.display

    assert isinstance(shown[1], IPython.display.Markdown)  # joins the page's text (dark mode): not an HTML output
    note = shown[1].data
    assert 'class="admonition tip' in note and "Using the explorer" in note
    assert "\n\n" not in note  # one raw HTML block
    assert visible_text(note) == "Using the explorer" + "Move τ." + EXPLORER_NOTE_SHARED
    assert len(shown) == 2


def test_show_explorer_without_note_shows_the_widget_alone(shown):
    show_explorer(FakeExplorer(), note=False)
    assert shown == ["the widget"]


def test_show_explorer_rejects_what_is_not_an_explorer(shown):
    with pytest.raises(TypeError, match="not ndarray"):
        show_explorer(np.zeros(3))
    assert shown == []


def test_note_without_usage_is_the_shared_sentence_alone():
    assert visible_text(explorer_note_html("")) == "Using the explorer" + EXPLORER_NOTE_SHARED
    with pytest.raises(TypeError, match="not int"):
        explorer_note_html(3)


@pytest.mark.parametrize("cls", explorer_classes(), ids=lambda c: c.__name__)
def test_every_explorer_says_what_its_controls_do_in_html_without_tex(cls):
    text = visible_text(cls.live_usage)
    assert len(text.split()) >= 8, f"{cls.__name__}.live_usage says too little: {text!r}"
    assert "$" not in text and "\\" not in text  # an output's HTML is not typeset: no TeX
    assert visible_text(explorer_note_html(cls.live_usage)).endswith(EXPLORER_NOTE_SHARED)


# -- printed lines fit the text column ---------------------------------------------------------------------
def test_print_error_folds_a_long_message_at_spaces_keeping_every_word(capsys):
    from attn.page import PRINT_WIDTH, print_error

    words = [f"word{i}" for i in range(60)]
    text = print_error(ValueError(" ".join(words)), "caught -> ")
    assert capsys.readouterr().out == text + "\n"
    lines = text.splitlines()
    assert len(lines) > 1 and all(len(line) <= PRINT_WIDTH for line in lines)
    assert lines[0].startswith("caught -> ValueError: word0 ") and all(line.startswith("    ") for line in lines[1:])
    assert text.split()[3:] == words                       # nothing lost or reordered: "caught", "->", "ValueError:"


def test_print_error_refuses_a_width_no_line_can_use():
    from attn.page import print_error

    with pytest.raises(ValueError, match="width must be at least 20 characters, got 5"):
        print_error(ValueError("x"), width=5)


def test_print_signature_folds_between_parameters(capsys):
    from attn.page import print_signature

    def f(alpha, beta: "float" = 1.0, gamma=None, delta: "str" = "raise") -> "int":
        return 0

    text = print_signature(f, prefix="m.", width=40)
    assert text.splitlines() == ["m.f(alpha, beta: float = 1.0,",      # 29 characters; +11 would pass 40
                                 "    gamma=None,",
                                 "    delta: str = 'raise') -> int"]  # annotations as written, not as strings
    assert " ".join(text.split()) == "m.f(alpha, beta: float = 1.0, gamma=None, delta: str = 'raise') -> int"
    assert capsys.readouterr().out == text + "\n"
    assert print_signature(lambda: 0, prefix="") == "<lambda>()"

    def g(x: "NotAName" = 1):  # an annotation that names nothing importable is shown as it was written
        return x

    assert print_signature(g, prefix="") == "g(x: 'NotAName' = 1)"
    import attn
    assert "scale: float | None = None" in " ".join(print_signature(attn.attention).split())


# -- folding printed lines: a short bracketed group is never cut --------------------------------------------------
def test_fold_keeps_a_pair_or_a_shape_on_one_line(capsys):
    from attn.page import fold, print_error, print_folded

    # practice-break §7 printed "(3," at the end of a line and "4)" on the next
    leaks = [(t, t + 1) for t in range(11)]
    line = f"{'j <= i + 1':17s} -> FAIL, future tokens read: {leaks}"
    text = print_folded(line, 78, " " * 21)
    assert capsys.readouterr().out == text + "\n"
    assert len(text.splitlines()) > 1 and all(len(row) <= 78 for row in text.splitlines())
    assert " ".join(text.split()) == " ".join(line.split())        # nothing lost or reordered
    for t, r in leaks:
        assert f"({t}, {r})" in text                               # every pair whole, on one line
    import re
    import textwrap
    plain = textwrap.fill(line, 78, subsequent_indent=" " * 21)  # what textwrap alone does: "(3," / "4)"
    assert any(re.search(r"\(\d+,$", row) for row in plain.splitlines())
    assert not any(re.search(r"\(\d+,$", row) for row in text.splitlines())
    msg = "X has shape (5, 6) but W_Q has shape (5, 6): the rows of W_Q must match the columns of X, " * 2
    folded = print_error(ValueError(msg), width=40)
    assert folded.count("(5, 6)") == 4 and all(len(row) <= 40 for row in folded.splitlines())
    assert fold("a " * 5 + "[" + "x " * 30 + "]", 30)              # a long group is folded like any text
    with pytest.raises(ValueError, match="indent"):
        fold("x", 24, " " * 20)


@pytest.mark.parametrize("fmt", [".0e", ".1e", ".2f", ".3f", ".4f", ".2g", ".0f"])
def test_a_printed_lower_bound_is_never_above_what_it_bounds(fmt):
    from attn.page import lower_bound

    rng = np.random.default_rng(1)
    values = np.concatenate([10.0 ** rng.uniform(-12, 3, 300) * rng.choice([-1, 1], 300), [0.99959, 0.99611, 0.0]])
    for v in values:
        text = lower_bound(v, fmt)
        assert float(text) <= v, (v, fmt, text)
        assert text == f"{v:{fmt}}" or float(f"{v:{fmt}}") > v    # changed only where plain rounding goes above
    assert lower_bound(0.99959, ".3f") == "0.999" and f"{0.99959:.3f}" == "1.000"
    with pytest.raises(ValueError, match="finite"):
        lower_bound(float("nan"))


# -- figure text: readable at the size the page shows it ------------------------------------------------------------
def test_figure_text_px_is_the_size_on_the_page():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from attn.page import FIGURE_COLUMN_PX, MIN_FIGURE_TEXT_PX, figure_text_px

    narrow, ax = plt.subplots(figsize=(5, 3), dpi=100)      # 500 px: shown at its own size
    ax.set_title("title", fontsize=12)
    ax.set_xticks([0, 1], ["a", "b"], fontsize=9)
    sizes = figure_text_px(narrow)
    assert sizes["title"] == pytest.approx(12 * 100 / 72) and sizes["a"] == pytest.approx(9 * 100 / 72)
    wide, axes = plt.subplots(1, 4, figsize=(11, 3), dpi=100)  # 1100 px: scaled down to the column
    axes[0].set_title("j ≤ i", fontsize=9)
    axes[1].set_visible(False)
    axes[1].set_title("hidden", fontsize=1)
    sizes = figure_text_px(wide)
    assert sizes["j ≤ i"] == pytest.approx(9 * 100 / 72 * FIGURE_COLUMN_PX / 1100)
    assert sizes["j ≤ i"] < MIN_FIGURE_TEXT_PX                   # the old Fig. 19: too small to read
    assert "hidden" not in sizes and "" not in sizes
    plt.close("all")


def test_as_math_writes_e_notation_as_math():
    from attn.page import as_math

    assert as_math("to within 3e-16").data == r"to within $3\times10^{-16}$"
    assert as_math("a gap of 1e-05 and 2.5e+03, no other 3 or 7e").data == r"a gap of $10^{-5}$ and $2.5\times10^{3}$, no other 3 or 7e"


def test_format_row_keeps_every_entry_to_the_same_significant_digits():
    from attn.page import format_row

    row = np.array([0.8804, 0.11920292, 2.954e-4], dtype=np.float16)
    text = format_row(row)
    assert text == "[8.80371e-01  1.19202e-01  2.95401e-04]"
    # six significant digits of each entry, whatever its size, read back to within half a unit of the sixth
    back = np.array([float(e) for e in text[1:-1].split()])
    assert np.allclose(back, row.astype(np.float64), rtol=5e-6, atol=0)
    assert format_row([1.0, 2.0], digits=2) == "[1.0e+00  2.0e+00]"
    with pytest.raises(ValueError, match="digits"):
        format_row([1.0], digits=0)
