"""Reading a submission: the notebook, the learner's name, the items it names, and what its code gives away.

Everything here is static (the file's text, never run): the learner is the
file's own name, whatever the notebook claims; flags are read from the code.
"""
from __future__ import annotations

import ast
import re
import stat
import unicodedata
from pathlib import Path

from ..items import CHAPTER

NOTEBOOK_SUFFIXES = (".md", ".ipynb")
MAX_BYTES = 20 * 2**20  # a notebook larger than this is not read (a learner's notebook is a few hundred kB)
GRADER_CALLS = {"check", "hint", "progress", "record_progress"}

_ITEM = r"[\"'](?:" + re.escape(CHAPTER + ".") + r")?([A-Za-z]\d\d)[\"']"  # "B01" or "II.3.B01"
_CALL_RE = re.compile(r"\b(?:check|hint)\(\s*" + _ITEM)
_VARIANT_RE = re.compile(r"\bvariant\(\s*" + _ITEM + r"(?:\s*,\s*(?:seed\s*=\s*)?(\w+))?")
# (bounded: an unbounded lazy run over a cell of a thousand unclosed "check(" took minutes)
_CHECK_SEED_RE = re.compile(r"\bcheck\(\s*" + _ITEM + r"[^)]{0,400}?\bseed\s*=\s*(\d+)")
# (plt.style.context(...) is matplotlib's, not Item.context)
_READS_EXPECTED_RE = re.compile(r"\.\s*(?:expected|(?<!style\.)context|judge|judge_outcomes)\s*\(|\b_cache\b|\bREGISTRY\b")


class NotNotebook(Exception):
    """The file cannot be read as a notebook (the message says why)."""


def nfc(name: str) -> str:
    return unicodedata.normalize("NFC", str(name)).strip()


def name_key(name: str) -> str:
    """Names a reader cannot tell apart compare equal: compatibility forms (fullwidth ``ｂｏｂ``), case, and
    invisible characters (zero-width spaces, bidirectional controls: Unicode category Cf) ignored."""
    text = unicodedata.normalize("NFKC", str(name))
    return " ".join("".join(c for c in text if unicodedata.category(c) != "Cf").split()).casefold()


def read_notebook(path: Path):
    """``(notebook, notes)``: the nbformat notebook at ``path`` and what reading it needed; or raise NotNotebook."""
    import jupytext
    import nbformat

    notes = []
    suffix = path.suffix.lower()
    if suffix not in NOTEBOOK_SUFFIXES:
        raise NotNotebook(f"not a notebook: expected a .md or .ipynb file, got {path.suffix or 'no extension'}")
    if suffix != path.suffix:
        notes.append(f"read as {suffix} (the file name says {path.suffix})")
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a named pipe or a device would block the read or never end
            raise NotNotebook("not a notebook: not a regular file (a named pipe, a device or a folder)")
        size = st.st_size
        if size > MAX_BYTES:
            raise NotNotebook(f"the file is {size / 2**20:.0f} MB; notebooks over {MAX_BYTES // 2**20} MB are not read")
        raw = path.read_bytes()
    except OSError as exc:
        raise NotNotebook(f"cannot read the file ({exc})") from None
    if not raw.strip():
        raise NotNotebook("empty file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        if b"\x00" in raw:
            raise NotNotebook("not a notebook: the file is binary") from None
        text = raw.decode("latin-1")
        notes.append("the file is not UTF-8; read as Latin-1")
    if suffix == ".md" and _yaml_aliases(text):
        raise NotNotebook("not a notebook: its YAML (the header or a cell's options) uses aliases (*name), "
                          "which could expand to billions of entries")
    try:
        if suffix == ".ipynb":
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
        else:
            nb = jupytext.reads(text, fmt="md:myst" if text.lstrip().startswith("---") else "md")
    except Exception as exc:  # noqa: BLE001 - any parse failure means "not a notebook"
        first = str(exc).splitlines()[0][:120] if str(exc) else ""
        raise NotNotebook(f"not a notebook ({type(exc).__name__}: {first})") from None
    return nb, notes


_CELL_OPTIONS_RE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*\{code-cell\}[^\n]*\n"
                              r"(?:[ \t]*---[ \t]*\n(.*?)^[ \t]*---[ \t]*$|((?:[ \t]*:[^\n]*\n)+))", re.M | re.S)


def _yaml_aliases(text: str) -> bool:
    """Whether the YAML jupytext would read (the front matter, a code cell's options) uses an alias: a few lines
    of ``&a [*b, *b, ...]`` expand to billions of entries when the notebook is built (a "billion laughs")."""
    import yaml

    blocks = [m[1] if m[1] is not None else m[2] for m in _CELL_OPTIONS_RE.finditer(text)]
    head = text.lstrip()
    if head.startswith("---"):
        end = re.search(r"^---[ \t]*$", head[3:], re.M)
        blocks.append(head[3:end.start() + 3] if end else head[3:])
    for block in blocks:
        if "&" not in block or "*" not in block:  # an alias (*a) needs an anchor (&a) in the same block
            continue
        try:
            if any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(block, Loader=yaml.SafeLoader)):
                return True
        except yaml.YAMLError:
            continue
    return False


def code_cells(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


_ITEM_ID_RE = re.compile(r"(?:" + re.escape(CHAPTER + ".") + r")?([A-Za-z]\d\d)")


def _aliased_calls(nb) -> list:
    """``[(kind, item_id, seed or None), ...]``: calls of ``check``, ``hint`` and ``variant`` under another name
    (``from attn.grading import check as c``, ``c2 = check``, in any cell) that name an item, read from the code's
    syntax. (``check(...)`` and ``g.check(...)`` are found by the regular expressions, in unparsable cells too.)"""
    trees = []
    for src in code_cells(nb):
        try:
            trees.append(ast.parse(src))
        except SyntaxError:
            continue
    nodes = [node for tree in trees for node in ast.walk(tree)]
    alias = {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("attn.grading"):
            alias.update({a.asname: a.name for a in node.names if a.asname and a.name in ("check", "hint", "variant")})
    for node in nodes:  # c = check, c = attn.grading.check, c2 = c
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            name = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
            if name in ("check", "hint", "variant") or name in alias:
                alias[node.targets[0].id] = alias.get(name, name)
    found = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in alias
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        m = _ITEM_ID_RE.fullmatch(node.args[0].value)
        if not m:
            continue
        kind = alias[node.func.id]
        seed = node.args[1] if kind == "variant" and len(node.args) > 1 else None
        for k in node.keywords:
            if k.arg == "seed":
                seed = k.value
        seed = seed.value if isinstance(seed, ast.Constant) and type(seed.value) is int and seed.value >= 0 else None
        found.append((kind, m[1].upper(), seed))
    return found


def items_in(nb) -> dict:
    """``{item_id: seed or None}`` for every item the code names; a seed given as a variable stays None here."""
    spec: dict = {}
    for src in code_cells(nb):
        for m in _VARIANT_RE.finditer(src):
            seed = int(m[2]) if m[2] and m[2].isdigit() else None
            spec[m[1].upper()] = seed if seed is not None else spec.get(m[1].upper())
        for m in _CALL_RE.finditer(src):
            spec.setdefault(m[1].upper(), None)
        for m in _CHECK_SEED_RE.finditer(src):
            spec[m[1].upper()] = int(m[2])
    for _, item, seed in _aliased_calls(nb):
        spec[item] = seed if seed is not None else spec.get(item)
    return spec


def seeds_in(nb) -> dict:
    """``{item_id: [seed, ...]}``: every literal seed the code gives an item, in order (``variant("V01", 3)``,
    ``check("V01", ..., seed=3)``); a notebook may make several variants, and not only the one it answers."""
    seeds: dict = {}
    for src in code_cells(nb):
        found = [(m.start(), m[1], m[2]) for m in _VARIANT_RE.finditer(src) if m[2] and m[2].isdigit()]
        found += [(m.start(), m[1], m[2]) for m in _CHECK_SEED_RE.finditer(src)]
        for _, item, seed in sorted(found):
            if int(seed) not in seeds.setdefault(item.upper(), []):
                seeds[item.upper()].append(int(seed))
    for _, item, seed in _aliased_calls(nb):
        if seed is not None and seed not in seeds.setdefault(item, []):
            seeds[item].append(seed)
    return seeds


def _grader_call(node: ast.stmt) -> ast.Call | None:
    """The grading call a top-level statement is (``check(...)``, ``fb = check(...)``, ``print(check(...))``)."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("print", "display")
            and len(value.args) == 1 and not value.keywords and isinstance(value.args[0], ast.Call)):
        value = value.args[0]
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    if isinstance(f, ast.Name):
        return value if f.id in GRADER_CALLS else None
    return value if isinstance(f, ast.Attribute) and f.attr in ("check", "hint") else None


def _is_grader_call(node: ast.stmt) -> bool:
    return _grader_call(node) is not None


def _part_names(item_id) -> set:
    from ..items import get_item, items

    if isinstance(item_id, str):
        try:
            return set(get_item(item_id).part_names)
        except (KeyError, TypeError):
            return set()
    return {name for it in items() for name in it.part_names}  # v.check(...): the variant's item is not named


def _answers_passed(call: ast.Call) -> list:
    """``[(part, expression), ...]``: the answers a ``check`` call judges as given, not read from a variable:
    ``check("B01", scores=S)``, ``check("B01", "output", W @ V)``, ``check("E01", my_softmax)``, ``v.check(w=W)``.
    The same reading as :func:`attn.grading.learner_api.check`."""
    f = call.func
    if not ((isinstance(f, ast.Name) and f.id == "check") or (isinstance(f, ast.Attribute) and f.attr == "check")):
        return []
    args = list(call.args)
    item_id = None
    named = args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str)
    if named and (isinstance(f, ast.Name) or _part_names(args[0].value)):  # check("B01", ...), g.check("B01", ...)
        item_id = args.pop(0).value
    elif isinstance(f, ast.Name):
        return []
    parts = _part_names(item_id)
    out = [(k.arg, k.value) for k in call.keywords if k.arg in parts]
    is_name = lambda a: isinstance(a, ast.Constant) and isinstance(a.value, str)  # noqa: E731
    if len(parts) == 1 and len(args) == 1 and not is_name(args[0]) and not call.keywords:
        return [(next(iter(parts)), args[0])]
    i = 0
    while i < len(args):
        if is_name(args[i]) and args[i].value in parts and i + 1 < len(args) and not is_name(args[i + 1]):
            out.append((args[i].value, args[i + 1]))
            i += 2
        else:
            i += 1
    return out


def strip_grader_calls(source: str) -> str:
    """The cell without its top-level grading statements (unparsable cells are kept as they are). A ``check``
    call given its answers as arguments becomes the assignments of those answers to the parts' variables (what
    the grader reads), so that an answer ``check`` judged in the notebook is not lost."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    calls = [n for n in tree.body if _is_grader_call(n)]
    if not calls:
        return source
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode("utf-8")) + 1)  # ast offsets count UTF-8 bytes
    data = source.encode("utf-8")
    for n in reversed(calls):
        a = starts[n.lineno - 1] + n.col_offset
        b = starts[n.end_lineno - 1] + n.end_col_offset
        given = _answers_passed(_grader_call(n))
        keep = "; ".join(f"{name} = ({ast.get_source_segment(source, expr)})" for name, expr in given)
        data = data[:a] + (keep or "pass").encode("utf-8") + data[b:]
    return data.decode("utf-8")


def assigned_names(source: str) -> set:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^(\w+)\s*=", source, flags=re.M)) | set(re.findall(r"^def (\w+)", source, flags=re.M))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        for target in getattr(node, "targets", []) + [getattr(node, "target", None)]:
            for n in ast.walk(target) if target is not None else ():
                if isinstance(n, ast.Name):
                    names.add(n.id)
    return names


def own_name(path: Path, learner_from: str = "stem") -> str:
    """The learner a file belongs to, from the file system alone (what the teacher controls)."""
    return nfc(path.parent.name if learner_from == "parent" else path.stem)


def claimed_name(nb) -> str | None:
    meta = (nb.metadata.get("attn") or {}) if nb is not None else {}
    return nfc(meta["learner"]) if isinstance(meta, dict) and meta.get("learner") else None


def learner_of(path: Path, nb, learner_from: str = "stem") -> str:
    """The row's learner: the file's own name (a notebook's ``attn.learner`` claim is kept beside it, not used)."""
    return own_name(path, learner_from)


def _attn_names(trees) -> tuple[set, set]:
    """Names bound to attn modules (``import attn as a``) and to attn objects (``from attn import softmax``)."""
    modules, objects = set(), set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "attn" or a.name.startswith("attn."):
                        modules.add((a.asname or a.name).split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module and (node.module == "attn"
                                                                       or node.module.startswith("attn.")):
                for a in node.names:
                    if not node.module.startswith("attn.grading"):
                        objects.add(a.asname or a.name)
    # names bound to those (sm = attn.softmax; f = sm; g = partial(sm, tau=2); h = lambda x: sm(x)), to a fixed
    # point: a function that calls sm calls attn's own. A value attn computed (w = attn.softmax(x)) is not one.
    def alias(value) -> bool:  # the value is attn's function itself, not something computed with it
        if isinstance(value, ast.Call):
            f = value.func
            return (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else "") == "partial"
        return isinstance(value, (ast.Name, ast.Attribute, ast.Lambda))

    assigns = [node for tree in trees for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
               and node.value is not None and alias(node.value)]
    grew = True
    while grew:
        grew = False
        for node in assigns:
            if any(isinstance(n, ast.Name) and (n.id in modules or n.id in objects) for n in ast.walk(node.value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                new = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)} - objects - modules
                if new:
                    objects |= new
                    grew = True
    return modules, objects


def flags(nb, function_parts: set) -> list[str]:
    """What the code gives away: reading the expected answers; attn's own code inside a function to be written."""
    out = []
    sources = [strip_grader_calls(s) for s in code_cells(nb)]
    if any(_READS_EXPECTED_RE.search(s) for s in sources):
        out.append("reads_expected")
    trees = []
    for s in sources:
        try:
            trees.append(ast.parse(s))
        except SyntaxError:
            continue
    modules, objects = _attn_names(trees)
    for tree in trees:  # the part bound to attn's own object: softmax = attn.softmax, from attn import softmax
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "attn":
                out += [f"uses_attn_in:{a.asname or a.name}" for a in node.names
                        if (a.asname or a.name) in function_parts]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                bound = {n.id for t in getattr(node, "targets", [getattr(node, "target", None)])
                         for n in ast.walk(t) if isinstance(n, ast.Name)} & function_parts
                if bound and any(isinstance(n, ast.Name) and (n.id in modules or n.id in objects)
                                 for n in ast.walk(node.value)):
                    out += [f"uses_attn_in:{name}" for name in bound]
    for tree in trees:  # attn's own function handed to a check, wherever the call is: check("E01", attn.softmax)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "check"
                                               or getattr(node.func, "attr", None) == "check"):
                first = node.args[0] if node.args else None
                named = _part_names(first.value) if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    else set()
                given = [(k.arg, k.value) for k in node.keywords if k.arg in function_parts] + [
                    (p, a) for a in node.args[1:] if not isinstance(a, ast.Constant)
                    for p in named & function_parts]  # check("E01", attn.softmax): the item's function part
                for name, value in given:
                    if isinstance(value, (ast.Name, ast.Attribute, ast.Lambda, ast.Call)) and any(
                            isinstance(n, ast.Name) and (n.id in modules or n.id in objects) for n in ast.walk(value)) \
                            and not (isinstance(value, ast.Call) and getattr(value.func, "id", getattr(
                                value.func, "attr", "")) != "partial"):
                        out.append(f"uses_attn_in:{name}")
    for tree in trees:
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name not in function_parts:
                continue
            inner_modules, inner_objects = _attn_names([ast.Module(body=node.body, type_ignores=[])])
            mods, objs = modules | inner_modules, objects | inner_objects
            uses = any((isinstance(n, ast.Name) and (n.id in objs or n.id in mods)) for n in ast.walk(node))
            if uses or inner_modules or inner_objects:
                out.append(f"uses_attn_in:{node.name}")
    return sorted(set(out))
