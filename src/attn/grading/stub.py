"""Is a function the learner's empty answer cell (``def f(...): ...``)? Standard library only.

Its text is also sent, ahead of ``runner/kernel_side.py``, into the learner's kernel by the teachers'
grader (``runner/collect.py``), so this file imports nothing from attn (the notebook may have patched it)
and nothing at module level. There it only marks a function "not tried"; no verdict depends on it.
"""


def is_stub(fn) -> bool:
    """True for a function whose body is only ``...`` (or ``pass``, a docstring): the learner's empty answer cell.

    Such a function returns None without doing anything; ``check`` reports it as
    "not tried" rather than "returned None". Read from the function's source with
    :mod:`ast` (IPython keeps a notebook cell's source). A lambda (whose source is its
    whole line), or a function whose source cannot be found, is a stub when its code
    object equals that of an empty function compiled by this same interpreter (so no
    opcode of a particular Python version is assumed): ``lambda x: None`` is one.
    """
    import ast
    import inspect
    import textwrap

    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    if fn.__name__ == "<lambda>" or getattr(fn, "__wrapped__", None) is not None:
        return _compiles_like_an_empty_function(code)  # inspect would read the line, or the wrapped function
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return _compiles_like_an_empty_function(code)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != fn.__name__:
        return False  # the source found is not this function's definition
    return all(isinstance(stmt, ast.Pass)
               or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                   and (stmt.value.value is Ellipsis or isinstance(stmt.value.value, str)))
               for stmt in node.body)


def _empty():
    ...


def _empty_documented():
    """A docstring and nothing else."""


def _compiles_like_an_empty_function(code) -> bool:
    """Whether ``code`` is the code of an empty function (a docstring allowed), compared as compiled here."""
    def same(ref):
        return (code.co_code == ref.co_code and code.co_names == ref.co_names
                and len(code.co_consts) == len(ref.co_consts)
                and all(type(a) is type(b) and (isinstance(b, str) or a == b)
                        for a, b in zip(code.co_consts, ref.co_consts)))
    return same(_empty.__code__) or same(_empty_documented.__code__)
