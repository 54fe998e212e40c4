"""Every ``# @save`` cell in both editions defines exactly what ``d2lmini`` ships.

Each top-level ``def``/``class`` in such a cell is compared with the object of the same name in
``d2lmini`` (``inspect.getsource`` in its module) by ``ast.dump`` after removing docstrings, so
comments, blank lines, formatting and docstrings may differ, code may not.
"""
from __future__ import annotations

import ast
import difflib
import importlib
import inspect
import pkgutil
import textwrap

import pytest

from chapter_source import LANGS, chapter_files, read_notebook


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return tree


def normalized(src: str) -> str:
    return ast.dump(_strip_docstrings(ast.parse(textwrap.dedent(src))), indent=1)


def save_definitions(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    return {
        node.name: ast.get_source_segment(source, node, padded=False)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def d2lmini_objects() -> dict[str, object]:
    import d2lmini

    objs: dict[str, object] = {}
    mods = [d2lmini] + [
        importlib.import_module(f"d2lmini.{m.name}") for m in pkgutil.iter_modules(d2lmini.__path__)
    ]
    for mod in mods:
        for name, obj in vars(mod).items():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and \
                    getattr(obj, "__module__", "").startswith("d2lmini"):
                objs.setdefault(name, obj)
    return objs


def compare(name: str, book_src: str, objs: dict[str, object]) -> str | None:
    """None if equal, else a message with a unified diff."""
    if name not in objs:
        return f"{name}: defined in a # @save cell but not found in d2lmini"
    lib_src = textwrap.dedent(inspect.getsource(objs[name]))
    book_src = textwrap.dedent(book_src)
    if normalized(book_src) == normalized(lib_src):
        return None
    diff = "\n".join(difflib.unified_diff(
        lib_src.splitlines(), book_src.splitlines(),
        f"d2lmini ({inspect.getsourcefile(objs[name])})", "book", lineterm=""))
    return f"{name}: the book's # @save definition differs from d2lmini:\n{diff}"


def save_cells(path):
    for k, cell in enumerate(read_notebook(path).cells):
        if cell.cell_type == "code" and cell.source.lstrip().startswith("# @save"):
            yield k, cell.source


PATHS = [p for lang in LANGS for p in chapter_files(lang)]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_save_blocks_match_d2lmini(path):
    objs = d2lmini_objects()
    problems = []
    for k, src in save_cells(path):
        try:
            defs = save_definitions(src)
        except SyntaxError as e:
            problems.append(f"cell {k}: does not parse: {e}")
            continue
        for name, seg in defs.items():
            msg = compare(name, seg, objs)
            if msg:
                problems.append(f"{path.parent.name}/{path.name} cell {k}: {msg}")
    assert not problems, "\n\n".join(problems)


def test_checker_detects_mismatch():
    """Meta-test: a block that differs from the library in code (not comments) fails."""
    def sample(x):
        """Doc."""
        return x + 1

    objs = {"sample": sample}
    same = 'def sample(x):\n    # a comment\n\n    return x + 1\n'
    other = 'def sample(x):\n    """Doc."""\n    return x + 2\n'
    assert compare("sample", same, objs) is None
    msg = compare("sample", other, objs)
    assert msg and "-    return x + 1" in msg and "+    return x + 2" in msg, msg
    assert compare("missing", same, objs).startswith("missing: ")
