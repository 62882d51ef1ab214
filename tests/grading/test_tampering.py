"""What the teachers' grader reads from a notebook's code as a means of tampering (attn.grading.runner.tampering),
and how a forged hand-over line is told from the grader's own (attn.grading.runner.collect.parse).

A means marks a row ``review`` (no credit until a person reads the code), so the honest idioms must stay unflagged:
a flag on honest work withholds a learner's credit. Both tables are the contract; the samples in
tests/data/submissions/attacks run them end to end (tests/grading/test_batch.py).
"""
import json

import jupytext
import pytest

from attn.grading import learner
from attn.grading.runner import collect
from attn.grading.runner.tampering import means

from book import ROOT

HONEST = {
    "NumPy's item()": "import numpy as np\nx = np.array([1.0, 2.0])\ny = x.max().item()",
    "matplotlib's step and style.context": "import matplotlib.pyplot as plt\nplt.step([1, 2], [3, 4])\n"
                                           "with plt.style.context('ggplot'):\n    pass",
    "np.lib.stride_tricks": "import numpy as np\nw = np.lib.stride_tricks.sliding_window_view(np.arange(5), 3)",
    "%matplotlib and %time": "%matplotlib inline\n%time y = 1 + 1",
    "%%timeit": "%%timeit\nz = sum(range(10))",
    "annotations, __name__, format strings": "def f(x: 'np.ndarray', tau: float = 1.0) -> 'np.ndarray':\n"
                                             "    return x\n"
                                             "print(f.__name__, '{:.2f}'.format(1.0), '{0[1]}'.format([1, 2]),"
                                             " f'{f.__name__}', '{x.shape}'.format(x=np.ones(2)))",
    "a class of one's own": "from typing import List\nclass A:\n    def __init__(self):\n        self.a = 1\n"
                            "        self.c = B()\n        self.c.d = 2\nclass B:\n    pass",
    "the learner's API and attn": "from attn.grading import check, hint, variant, progress, record_progress\n"
                                  "v = variant('V01', 3)\nQ = v.Q\nimport attn\nw = attn.softmax([1.0, 2.0])\n"
                                  "v.check('weights')",
    "dict.items()": "for k, v in {'a': 1}.items():\n    print(k, v)",
    "IPython.display": "from IPython.display import display, Markdown\ndisplay(Markdown('**x**'))",
    "a random generator": "import numpy as np\nrng = np.random.default_rng(0)\nrng.standard_normal((3, 4)).T @ np.ones(3)",
    "regular expressions": "import re\nre.findall(r'\\d{2}', 'a12')",
    "a star import and a variable named exec": "from re import *\nexec = 'an execution time'\nprint(compile)",
    "versions and class names": "import numpy as np\nprint(np.__version__)\nclass A:\n    def __repr__(self):\n"
                                "        return f'{self.__class__.__name__}()'\nlen([1]) == [1].__len__()",
    "%%capture": "%%capture\nimport numpy as np",
    "%config, %load_ext autoreload, %precision": "%config InlineBackend.figure_format = 'retina'\n"
                                                  "%load_ext autoreload\n%autoreload 2\n%precision 3",
    "operator, timeit, datetime, tqdm": "import operator, timeit, datetime\nfrom tqdm import tqdm\n"
                                        "operator.itemgetter(0)([1])\ntimeit.timeit('sum(range(10))', number=10)\n"
                                        "f = operator.attrgetter('shape')",
    "attn.grading's API by its path": "import attn\nimport attn.grading as g\nattn.grading.check('B01')\n"
                                      "g.check('B01')\ng.hint('B01')",
    "help with ?": "import numpy as np\nnp.exp?",
    "a star import of the learner's API": "from attn.grading import *\ncheck('B01')",
    "attributes of one's own named like the grader's": "class Case:\n    def __init__(self, expected, parts):\n"
                                                        "        self.expected = expected\n        self.parts = parts\n"
                                                        "c = Case(1, [2])\nprint(c.expected, c.parts)",
}

HOSTILE = {  # code -> a means that must be among those named
    "get_ipython().events.register('pre_run_cell', f)": "get_ipython",
    "import sys\nsys.stdout = None": "import sys",
    "import json\njson.dumps = lambda o: '{}'": "assigning json.dumps",
    "import matplotlib\nmatplotlib.font_manager.json.dumps = str": "assigning matplotlib.font_manager.json.dumps",
    "from functools import reduce\nm = reduce(getattr, ['sy' + 's'], np)": "getattr passed as a value",
    "t = getattr(attn, 'grading')": "getattr .grading",
    "t = getattr(x, 'exp' + 'ected')": "getattr with a computed name",
    "v = variant('V01', 1)\nv.item.expected()": ".item",
    "def f(): pass\ns = '{0.__globals__[_ih]}'.format(f)": "a format string reading .__globals__",
    "import string\nstring.Formatter().get_field('0.x', [f], {})": ".Formatter",
    "def g(x: \"__import__('sys')._getframe(1)\"): pass": "__import__",
    "from typing import get_type_hints": "import typing.get_type_hints",
    "import numpy as np\nnp.load(fobj, allow_pickle=True)": "allow_pickle=",
    "x = In[-1]": "In",
    "x = _i3": "_i3",
    "class K:\n    def __array__(self):\n        return __builtins__": "__builtins__",
    "_attn_checked['parts']['scores'] = (1, 2)": "_attn_checked",
    "from attn.grading.learner_api import answer_listeners": "import attn.grading.learner_api.answer_listeners",
    "import attn\nattn.grading.learner_api.answer_listeners.clear()": ".answer_listeners",
    "%run evil.py": "magic %run",
    "%%bash\necho hi": "magic %%bash",
    "!ls": "get_ipython",
    "%time x = __import__('os')": "__import__",
    "try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame.f_back": ".f_back",
    "g = (i for i in [1])\ng.gi_frame": ".gi_frame",
    "import numpy as np\nnp.save('a', np.ones(2))": ".save",
    "X = type('X', (), {})": "type() making a class",
    "import numpy as np\nsetattr(np, 'allclose', f)": "setattr",
    "exec('print(1)')": "exec",
    "from attn.grading import get_item\nget_item('E08').expected()": "import attn.grading.get_item",
    "import threading": "import threading",
    "exec = exec\nexec('print(1)')": "exec",
    "from re import *\nfrom ipywidgets import *\nget_ipython()": "get_ipython",
    "import attn\ng = attn.grading\ng.items()": "attn.grading as a value",
    "import attn.grading as g\nits = g.items()": "g.items",
    "match check:\n    case object(__globals__=gl):\n        pass": "a pattern reading .__globals__",
    "match v:\n    case object(item=it):\n        pass": "a pattern reading .item",
    "import collections\ns = collections._sys\ns.stdout = None": "._sys",
    "from random import _os": "import random._os",
    "import operator\noperator.attrgetter('f_back')(e)": "attrgetter .f_back",
    "import operator\nget = operator.attrgetter\nget('x')": ".attrgetter passed as a value",
    "import timeit\ntimeit.timeit(\"__import__('os')\", number=1)": "__import__",
    "%load_ext mine": "magic %load_ext mine",
    "%config InteractiveShell.ast_transformers = []": "magic %config InteractiveShell.ast_transformers = []",
    "%%bash\nls": "magic %%bash",
    "import contextlib": "import contextlib",
    "from unittest import mock": "import unittest",
    "x = np.__dict__": ".__dict__",
    "import json\njson._default_decoder.__init__(object_hook=f)": "the private json._default_decoder",
    "from copy import _deepcopy_dispatch": "import copy._deepcopy_dispatch",
    "c = getattr(it, 'context')": "getattr .context",
    "match it:\n    case object(expected=e):\n        pass": "a pattern reading .expected",
    "_attn_checked = {'by_item': {}}": "_attn_checked",
    "__import__ = print": "__import__",
    "import json\ndec = json.JSONDecoder\ndec.decode = f": "assigning dec.decode",
    "import operator\noperator.attrgetter('expected')(it)": "attrgetter .expected",
}


def test_a_library_imported_in_one_cell_is_watched_in_the_next():
    assert "assigning json.dumps" in means(["import json", "json.dumps = str"])
    assert "the private json._default_decoder" in means(["import json", "json._default_decoder.__init__(object_hook=f)"])
    assert "assigning dec.decode" in means(["import json", "dec = json.JSONDecoder", "dec.decode = f"])


@pytest.mark.parametrize("what", sorted(HONEST))
def test_honest_idioms_are_no_means(what):
    assert means([HONEST[what]]) == []


@pytest.mark.parametrize("code", sorted(HOSTILE))
def test_each_route_to_the_grader_is_named(code):
    assert HOSTILE[code] in means([code])


def test_text_that_is_not_python_is_skipped_never_raised():
    assert means(["def (:", "\x00\x01", "x = (" * 5000, ""]) == []


def test_every_learner_copy_filled_in_with_its_solution_is_honest_work():
    """The solution cells of every problem and exercise page, put where the learner copy's answers go: what a
    learner who worked the page would submit. None of it may be a means (each would withhold credit)."""
    pages = learner.pages(ROOT)
    assert len(pages) == 19
    for page in pages:
        book = jupytext.read(page)
        solution = [c.source for c in book.cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])
                    and "remove-cell" not in c.metadata.get("tags", [])]
        copy = jupytext.read(learner.copy_path(page, ROOT))
        cells = [c.source for c in copy.cells if c.cell_type == "code"] + solution
        assert means(cells) == [], page.name


def test_a_second_line_with_the_nonce_is_a_forged_hand_over():
    nonce = "ATTN" + "0" * 32
    real = nonce + json.dumps({"values": {"tau": 1.0}, "functions": {}, "variants": []})
    assert collect.parse("learner output\n" + real + "\n", nonce)["values"] == {"tau": 1.0}
    forged = nonce + json.dumps({"values": {"tau": 2.0}, "functions": {}, "variants": []})
    assert collect.parse(forged + "\n" + real + "\n", nonce) == {collect.TAMPERED: 2}
    assert collect.parse(real + "\n" + forged, nonce) == {collect.TAMPERED: 2}
    assert collect.parse("no line at all", nonce) is None


def test_a_variant_leads_to_no_item():
    """A Variant keeps its item's id, never the item (whose methods compute the expected answers): nothing reached
    from it, a deepcopy's memo included, is an Item."""
    import copy

    from attn.grading import variant
    from attn.grading.items import Item

    v = variant("V01", 3)
    memo: dict = {}
    copy.deepcopy(v, memo)
    assert (v.item_id, v.seed) == ("V01", 3)
    assert not any(isinstance(x, Item) for x in [*memo.values(), *vars(v).values()])
