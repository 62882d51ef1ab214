"""What in a notebook's code could reach the grader inside the kernel: read from the text, before anything runs.

The learner's kernel belongs to the submission. The grader's last cell hands the
learner's values over as one printed line that carries a secret nonce; code of
the notebook's own that runs while that cell runs (an IPython hook, an input
transformer, a method the hand-over calls, a patched library function) could read
the nonce from the cell's text, the history or a stack frame and print a forged
line, rewrite the line as it is written, or read the grader's own objects for the
expected answers. None of this can be prevented inside a process the submission
owns, so it is looked for in the code instead: every way this module knows to
reach the cell text, frames, the interpreter, hidden code (strings run as code,
pickles), the files or the grader's internals is named here, once. Honest work on
the exercises needs none of them (the learner copies use numpy, math, matplotlib,
attn and ``check``, ``hint``, ``variant``, ``progress``, ``record_progress``), and
``tests/grading/test_tampering.py`` keeps a list of honest idioms that must stay
unflagged (``x.item()``, ``plt.step``, ``np.lib.stride_tricks``, ``%time``, ...).

It is a list, so it can be incomplete: it raises the cost of forging a hand-over,
it does not make it impossible (the README's *What it does not guarantee*).
A notebook that uses one is flagged ``tampering``, and a row that would give
credit is marked ``review``: no credit until a person has read the code (:mod:`grade`).
"""
from __future__ import annotations

import ast
import re

# Modules honest work may import; anything else (sys, os, inspect, gc, ctypes, IPython, importlib, io, pickle,
# threading, subprocess, ...) is a means. attn.grading is further limited to the learner's API.
# (Not contextlib, unittest, io: redirect_stdout and mock.patch("sys.stdout") replace what the hand-over writes to.)
ALLOWED_MODULES = frozenset({
    "numpy", "math", "cmath", "attn", "matplotlib", "mpmath", "scipy", "itertools", "functools", "fractions",
    "decimal", "statistics", "random", "collections", "dataclasses", "typing", "numbers", "copy", "string", "re",
    "textwrap", "pprint", "heapq", "bisect", "time", "json", "warnings", "ipywidgets", "__future__",
    "operator", "timeit", "datetime", "enum", "abc", "tqdm", "array", "calendar", "secrets", "hashlib", "sympy",
})
# Calls whose string arguments are code or attribute paths, read like code: timeit.timeit("f(x)"), Timer("..."),
# operator.attrgetter("f_back"), methodcaller("__reduce__").
CODE_STRINGS = frozenset({"timeit", "repeat", "Timer", "autorange"})
NAME_STRINGS = frozenset({"attrgetter", "methodcaller"})
ALLOWED_IPYTHON = frozenset({"IPython.display"})  # display(...), HTML(...): its module attributes are still read
LEARNER_API = frozenset({"check", "hint", "variant", "progress", "record_progress"})

# Names that reach the kernel, the interpreter, hidden code or the cell history, and the dunders of DUNDERS.
NAMES = frozenset({
    "get_ipython", "globals", "locals", "vars", "exec", "eval", "compile", "breakpoint", "open",
    "In", "Out", "_ih", "_oh", "_dh", "_i", "_ii", "_iii", "exit", "quit", "memoryview",
})
# Built-ins that read or write an attribute by name: called with a constant name, the name is judged like an
# attribute; passed as a value (map(getattr, ...), functools.reduce(getattr, ...)), they are a means themselves.
BY_NAME = frozenset({"getattr", "hasattr", "setattr", "delattr"})
# Attribute names that reach the same from an object: frames and code, interpreter modules hanging off a library
# (matplotlib.cbook.sys, np.ctypeslib; with a leading underscore too: collections._sys, random._os), strings or
# pickles run as code, file input and output through numpy, the streams the hand-over writes to, IPython's hooks,
# and the ways to the grader's own objects (an Item holds the expected answers: get_item, items(), a Variant's
# ``item``, the module attn.grading itself). Called (``x.item()``), ``item`` is NumPy's and harmless.
ATTRIBUTES = frozenset({
    "f_back", "f_locals", "f_globals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame", "gi_code",
    "cr_frame", "ag_frame", "co_consts", "getframe",
    "sys", "os", "builtins", "inspect", "gc", "ctypes", "ctypeslib", "importlib", "IPython", "ipykernel",
    "get_ipython", "subprocess", "io", "f2py", "distutils", "pathlib", "threading", "pickle", "marshal",
    "contextlib", "unittest", "mock", "posix", "signal", "weakref",
    "fromfile", "tofile", "loadtxt", "savetxt", "genfromtxt", "fromregex", "load", "save", "savez",
    "savez_compressed", "memmap", "DataSource", "open", "read_array", "write_array",
    "stdout", "stderr", "stdin", "redirect_stdout", "redirect_stderr",
    "get_type_hints", "ForwardRef", "Formatter", "get_field", "vformat",
    "events", "input_transformers_post", "input_transformers_cleanup", "ast_transformers", "displayhook",
    "excepthook", "showwarning", "showtraceback", "display_pub", "shell", "kernel",
    "answer_listeners", "get_item", "REGISTRY",
})
# Attributes of the grader's items, judged where a name is given as text (getattr, attrgetter, a match pattern): as
# plain attributes they are common words (self.expected = ...), and every route to an item is flagged anyway.
ITEM_ATTRIBUTES = frozenset({"expected", "context", "judge", "judge_outcomes", "honest", "routes", "cases", "parts",
                             "part", "mistakes", "tolerance", "rounding_error", "item", "grading"})
CALLED_ONLY = frozenset({"item"})  # harmless when called: x.item(); as a value (v.item.expected) it is the grader's
# Dunders that hand over an object on the way to frames, globals, built-ins or code: any other (__name__,
# __version__, __class__, __len__, __array__, ...) reads or does no more than the code could without it.
DUNDERS = frozenset({
    "__globals__", "__builtins__", "__dict__", "__code__", "__closure__", "__subclasses__", "__bases__", "__base__",
    "__mro__", "__self__", "__func__", "__wrapped__", "__traceback__", "__context__", "__cause__", "__loader__",
    "__spec__", "__import__", "__build_class__", "__getattribute__", "__reduce__", "__reduce_ex__", "__defaults__",
    "__kwdefaults__", "__annotations__", "__objclass__", "__setattr__", "__delattr__", "__init_subclass__",
    "__class_getitem__", "__set_name__", "__setstate__", "__getstate__", "__subclasshook__", "__weakref__",
    "__file__", "__path__", "__cached__", "__frame__",
})
KEYWORDS = frozenset({"allow_pickle"})  # np.load(..., allow_pickle=True) runs a pickle: code hidden in bytes
# Magics an honest notebook uses (the code of %time, %timeit, %%capture is read like any other code), and the
# extensions %load_ext may load. %config may set only the inline backend's options.
MAGICS = frozenset({"matplotlib", "time", "timeit", "precision", "who", "whos", "reset", "env", "pip", "autoreload",
                    "config", "load_ext", "capture", "pprint", "xmode", "pdef", "pdoc", "pinfo", "pinfo2", "psearch"})
CELL_MAGICS = frozenset({"time", "timeit", "capture"})
EXTENSIONS = frozenset({"autoreload"})
# A format string's field that reads an attribute or an item: "{0.__globals__}", "{f.f_back}".
_FORMAT_FIELD = re.compile(r"\{([^{}!:]*[.\[][^{}!:]*)[}!:]")
_FIELD_NAME = re.compile(r"[.\[]\s*([A-Za-z_]\w*)")


def python_source(cell: str) -> str:
    """The cell as the kernel runs it: IPython's own transformer turns magics and ``!`` lines into calls."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell)


def _magic_code(node: ast.Call) -> tuple[str | None, str | None]:
    """``(magic, code)`` for ``get_ipython().run_line_magic('time', 'f(x)')`` and ``run_cell_magic``; else Nones."""
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr in ("run_line_magic", "run_cell_magic")
            and isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name)
            and f.value.func.id == "get_ipython" and not f.value.args):
        return None, None
    args = node.args
    if not args or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
        return None, None
    return args[0].value, args[-1].value


def _import_means(node) -> list[str]:
    out = []
    if isinstance(node, ast.Import):
        for a in node.names:
            top = a.name.split(".")[0]
            if (top not in ALLOWED_MODULES and a.name not in ALLOWED_IPYTHON) or a.name.startswith("attn.grading."):
                out.append(f"import {a.name}")
    elif isinstance(node, ast.ImportFrom):
        module = node.module or ""
        top = module.split(".")[0]
        if node.level or (top not in ALLOWED_MODULES and module not in ALLOWED_IPYTHON):
            out.append(f"import {'.' * node.level}{module}")
        elif module.startswith("attn.grading"):
            out += [f"import {module}.{a.name}" for a in node.names
                    if module != "attn.grading" or a.name not in LEARNER_API | {"*"}]
        elif module == "attn":
            out += [f"import attn.{a.name}" for a in node.names if a.name in ("grading", "*")]
        else:  # from numpy import load, from typing import get_type_hints, from random import _os, from json import _x
            out += [f"import {module}.{a.name}" for a in node.names
                    if _attribute_means(a.name, called=False) or _private(a.name)]
    return out


def _is_dunder(name: str) -> bool:
    return name in DUNDERS


def _private(name: str) -> bool:
    """A module's private name (json._default_decoder, copy._deepcopy_dispatch): its machinery, not its API."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _attribute_means(attr: str, called: bool) -> bool:
    bare = attr.lstrip("_")  # collections._sys, random._os, sys._getframe
    return (attr in ATTRIBUTES or bare in ATTRIBUTES or _is_dunder(attr)
            or (attr in CALLED_ONLY and not called))


def _format_means(text: str) -> list[str]:
    """Attributes a format string reads from its arguments: ``"{0.__globals__[_ih]}".format(f)``."""
    out = []
    for field in _FORMAT_FIELD.findall(text):
        out += [f"a format string reading .{name}" for name in _FIELD_NAME.findall(field)
                if _attribute_means(name, called=False) or name in NAMES]
    return out


def _nested(text: str, depth: int) -> list[str]:
    """The means in code held in a string that a library runs (a magic's code, a string annotation)."""
    if depth >= 3:
        return []
    try:
        return _means_in(ast.parse(python_source(text)), depth + 1)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []


def _annotations(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            yield from (a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs
                        + [args.vararg, args.kwarg] if a is not None and a.annotation is not None)
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


STAR_EXPORTS = {"re": {"compile"}}  # allowed modules whose star import binds a name of NAMES to something harmless


def own_names(trees: list) -> set:
    """Names the notebook binds itself (assigned, defined, imported, or from an allowed star import): a variable
    named ``exec`` or ``from re import *``'s ``compile`` is the learner's own, not the built-in."""
    def clean(value) -> bool:  # exec = exec would launder the built-in: the value may name none of them
        return not any(isinstance(n, ast.Name) and (n.id in NAMES or n.id in BY_NAME or _is_dunder(n.id))
                       for n in ast.walk(value))

    own = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and clean(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                own |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                for a in node.names:
                    own |= STAR_EXPORTS.get(node.module or "", set()) if a.name == "*" else set()
    return own


def _magic_means(node: ast.Call, magic: str, code: str, depth: int) -> list[str]:
    """A magic the kernel runs: allowed ones as they are used honestly, their code read like any other."""
    if node.func.attr == "run_cell_magic":
        return _nested(code, depth) if magic in CELL_MAGICS else [f"magic %%{magic}"]
    if magic not in MAGICS:
        return [f"magic %{magic}"]
    if magic == "load_ext" and code.strip() not in EXTENSIONS:
        return [f"magic %load_ext {code.strip()[:40]}"]
    if magic == "config" and not code.strip().startswith("InlineBackend."):
        return [f"magic %config {code.strip()[:40]}"]
    return _nested(code, depth) if magic in ("time", "timeit") else []


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _string_args(node: ast.Call) -> list:
    return [a for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Constant)
            and isinstance(a.value, str)]


def _library_aliases(tree: ast.AST, modules: set) -> set:
    """Names bound to a library's objects (``dec = json.JSONDecoder``, ``d = dec``), to a fixed point."""
    aliases, grew = set(), True
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Attribute, ast.Name))]
    while grew:
        grew = False
        for node in assigns:
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in modules or root.id in aliases):
                new = {t.id for t in node.targets if isinstance(t, ast.Name)} - aliases - modules
                if new:
                    aliases |= new
                    grew = True
    return aliases


def imported_names(trees: list) -> set:
    """Every name an import binds in the notebook (a cell uses what an earlier one imported), and the names bound
    to a library's objects from them."""
    modules = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                modules |= {a.asname or a.name for a in node.names}
    for tree in trees:
        modules |= _library_aliases(tree, modules)
    return modules


def _means_in(tree: ast.AST, depth: int = 0, own: frozenset = frozenset(),
              imported: frozenset = frozenset()) -> list[str]:
    out = []
    magic_calls = set()  # get_ipython() calls that are IPython's own rewriting of an allowed magic
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    # attn.grading.check(...) is the learner's API; attn.grading as a value, or .items(), is the grader's registry
    api = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in LEARNER_API}
    grading_aliases = {a.asname for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names
                       if a.name == "attn.grading" and a.asname}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            magic, code = _magic_code(node)
            if magic is None:
                continue
            magic_calls.add(id(node.func.value.func))
            out += _magic_means(node, magic, code, depth)
    for annotation in _annotations(tree):  # typing.get_type_hints and singledispatch evaluate string annotations
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            out += _nested(annotation.value, depth)
    modules = set(imported) | imported_names([tree])  # dec = json.JSONDecoder: dec.decode = f patches the library
    for node in ast.walk(tree):
        out += _import_means(node)
        if isinstance(node, ast.Name) and (_is_dunder(node.id) or node.id.startswith("_attn")):
            out.append(node.id)  # read or bound: __import__ = f, _attn_checked = {...} change what the grader runs
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):  # (a variable named exec is harmless)
            name = node.id
            if (name in NAMES and name not in own) or (name.startswith("_i") and name[2:].isdigit()):
                if not (name == "get_ipython" and id(node) in magic_calls):
                    out.append(name)
            elif (name in BY_NAME or name in NAME_STRINGS) and id(node) not in called:
                out.append(f"{name} passed as a value")
        elif isinstance(node, ast.Attribute):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if _attribute_means(node.attr, id(node) in called):
                out.append(f".{node.attr}")
            elif _private(node.attr) and isinstance(root, ast.Name) and root.id in modules:
                out.append(f"the private {ast.unparse(node)[:60]}")
            elif node.attr == "grading" and id(node) not in api:
                out.append("attn.grading as a value" if isinstance(node.ctx, ast.Load) else ".grading")
            elif isinstance(node.value, ast.Name) and node.value.id in grading_aliases and node.attr not in LEARNER_API:
                out.append(f"{node.value.id}.{node.attr}")
            elif node.attr in NAME_STRINGS and id(node) not in called:
                out.append(f".{node.attr} passed as a value")
            elif isinstance(node.ctx, (ast.Store, ast.Del)):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                # a library's attribute (json.dumps = f, np.core.x.y = f): what the grader's own code calls
                if isinstance(root, ast.Name) and (root.id in modules or
                                                   (root is not node.value and root.id != "self")):
                    out.append(f"assigning {ast.unparse(node)}")
        elif isinstance(node, ast.MatchClass):  # case object(__globals__=g): an attribute read by a pattern
            out += [f"a pattern reading .{a}" for a in node.kwd_attrs
                    if _attribute_means(a, called=False) or a in ITEM_ATTRIBUTES or _private(a)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BY_NAME:
            name, args = node.func.id, node.args
            attr = args[1] if len(args) > 1 else None
            if name in ("setattr", "delattr"):
                out.append(name)
            elif not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
                out.append(f"{name} with a computed name")
            elif _attribute_means(attr.value, called=False) or attr.value in ITEM_ATTRIBUTES or _private(attr.value):
                out.append(f"{name} .{attr.value}")
        elif isinstance(node, ast.Call) and _call_name(node) in NAME_STRINGS:
            strings = _string_args(node)
            if len(strings) < len(node.args) + len(node.keywords):
                out.append(f"{_call_name(node)} with a computed name")
            out += [f"{_call_name(node)} .{part}" for a in strings for part in a.value.split(".")
                    if _attribute_means(part, called=False) or part in ITEM_ATTRIBUTES or _private(part)]
        elif isinstance(node, ast.Call) and _call_name(node) in CODE_STRINGS:
            for a in _string_args(node):  # timeit.timeit("code"): code the library compiles and runs
                out += _nested(a.value, depth)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
                and len(node.args) == 3:
            out.append("type() making a class")
        elif isinstance(node, ast.keyword) and node.arg in KEYWORDS:
            out.append(f"{node.arg}=")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "{" in node.value:
            out += _format_means(node.value)
    return out


def means(cells: list[str]) -> list[str]:
    """Every means of tampering in the code cells (as sent to the kernel), sorted, each once.

    ``cells``: code cell sources (str). A cell that is not Python even after IPython's transformation is skipped
    (the kernel cannot run it either). Never raises for any text; returns ``[]`` for honest work.
    """
    trees, found = [], set()
    for cell in cells:
        try:
            trees.append(ast.parse(python_source(cell)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    try:
        own, imported = frozenset(own_names(trees)), frozenset(imported_names(trees))
        for tree in trees:
            found.update(_means_in(tree, own=own, imported=imported))
    except RecursionError:  # code nested too deep to walk is not honest work either
        found.add("code nested too deeply to read")
    return sorted(found)
