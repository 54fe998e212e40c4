"""The code stays readable: no function or method longer than 60 lines (the definition as
``ast`` sees it: decorators aside, signature, docstring and body) in ``d2lmini``, in the book's
tools (``tools/``, every job) and in ``scripts/``.

Every function counts, public or private, at module level or in a class (a private class's
methods too), in every module of the package and its sub-packages. A
function nested in another is counted inside its parent: 31 closures in a 568-line function do
not make 31 short functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "d2lmini"
MAX_LINES = 60
MODULES = sorted(p for directory in (PACKAGE, ROOT / "tools", ROOT / "scripts")
                 for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """``(qualified name, lines)`` of each outermost function of ``tree``: module-level
    functions and the methods of classes (nested classes included); functions defined inside
    a function are part of it and not listed."""
    for node in getattr(tree, "body", []):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node.end_lineno - node.lineno + 1
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, prefix + node.name + ".")
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
            yield from functions(node, prefix)  # a definition under if TYPE_CHECKING, try …
            for part in ("orelse", "finalbody"):
                yield from functions(ast.Module(body=getattr(node, part, []),
                                                type_ignores=[]), prefix)
            for handler in getattr(node, "handlers", []):
                yield from functions(handler, prefix)


def too_long(source: str) -> dict[str, int]:
    """The functions of ``source`` longer than ``MAX_LINES``, with their lengths."""
    return {name: n for name, n in functions(ast.parse(source)) if n > MAX_LINES}


def test_every_module_is_measured():
    names = {p.relative_to(ROOT).as_posix() for p in MODULES}
    assert {"d2lmini/data.py", "d2lmini/transformer.py", "tools/corpus/sampler.py",
            "tools/setup/dev.py", "tools/build/build_book.py", "tools/build/book_sphinx/claims.py",
            "tools/classroom/assign.py", "scripts/train_full.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_functions_are_at_most_60_lines(path):
    long = too_long(path.read_text(encoding="utf-8"))
    assert not long, f"{path.relative_to(ROOT)}: {long}"


def _function(name: str, body_lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines))
    return f"{indent}def {name}():\n{body}"


def test_the_measure_counts_private_nested_and_method_lines():
    """What the old grammar's ``_build`` was: a private function of short closures, 568 lines
    in all; and a method of a private class. Each is found; a 60-line function is not."""
    closures = "".join(_function(f"rule{i}", 8, "    ") for i in range(31))
    build = "def _build():\n" + closures + "    return 0\n"
    source = (build + _function("fits", 59) +
              "class _Grammar:\n" + _function("sample", 61, "    ") +
              "if True:\n" + _function("_hidden", 70, "    "))
    long = too_long(source)
    assert long == {"_build": 1 + 31 * 9 + 1, "_Grammar.sample": 62, "_hidden": 71}, long
    assert "fits" not in long and not any(name.startswith("rule") for name in long)
