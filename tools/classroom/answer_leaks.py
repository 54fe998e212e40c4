"""Public checks that give the answer away: a solution's own expression inside an ``exercise-test``.

A graded exercise's public checks (code cells tagged ``exercise-test``) are in the student's
notebook: ``grader.check`` runs them, and the student can read them. They may check a shape, a
type, a case one can work out by hand, but must not contain the code that computes the answer;
otherwise a student copies the check into the answer cell and passes. (Hidden tests, tagged
``exercise-test-hidden``, only reach the grader and may contain anything.)

:func:`leaks` compares, after normalisation, the *answer code* of an exercise's worked solution
with each public check. The answer code is every statement of the solution's code cells that binds
a name the tests check (``mask_triu = ...``, the body of ``def mha_num_params``), not its own
``assert`` or ``print`` lines. Normalisation: both sides are parsed and unparsed with :mod:`ast`
(so whitespace, quotes and parentheses do not matter), and in the solution a name bound once to a
literal (``n5 = 5``) is replaced by its value. A check leaks when it contains a whole answer
statement, or any sub-expression of one (a call, a comparison, an operand...; not a bare dotted
name such as ``F.scaled_dot_product_attention``) of at least :data:`MIN_CHARS` characters; or a
call of the same shape as one in the answer, with its variables renamed (the variables erased,
the functions called kept), when that shape is at least :data:`SHAPE_MIN_CHARS` long.
"""
from __future__ import annotations

import ast
import copy
from collections.abc import Iterable

from tools.classroom.exercises import Exercise, _bindings, _python_only

MIN_CHARS = 15
SHAPE_MIN_CHARS = 30


def _literals(trees: Iterable[ast.Module]) -> dict[str, ast.expr]:
    """Top-level names bound exactly once, to a literal (``n5 = 5``, ``eps = -1e-9``)."""
    found: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for tree in trees:
        for stmt in tree.body:
            for name, _ in _bindings(stmt):
                if name in seen:
                    found.pop(name, None)
                    continue
                seen.add(name)
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and _is_literal(stmt.value)):
                    found[name] = stmt.value
    return found


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


class _Substitute(ast.NodeTransformer):
    """Replace the loads of the given names by their literal values."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return self.values[node.id]
        return node


def _parse(src: str) -> ast.Module | None:
    try:
        return ast.parse(_python_only(src))
    except SyntaxError:
        return None


def answer_statements(ex: Exercise) -> list[ast.stmt]:
    """The statements of the worked solution that bind a name the tests check (constants
    substituted): assignments, and every statement in the body of a checked function."""
    checked = {name for name, _ in ex.checked_names()}
    trees = [t for s in ex.solution if s.kind == "code" and (t := _parse(s.cell.source))]
    sub = _Substitute(_literals(trees))
    out: list[ast.stmt] = []
    for tree in trees:
        for stmt in ast.parse(ast.unparse(sub.visit(tree))).body:
            if not {name for name, _ in _bindings(stmt)} & checked:
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out += [s for s in ast.walk(stmt) if isinstance(s, ast.stmt) and s is not stmt
                        and not isinstance(s, (ast.Assert, ast.Expr))]
            elif not isinstance(stmt, (ast.Assert, ast.Expr, ast.Import, ast.ImportFrom)):
                out.append(stmt)
    return out


def _dotted(node: ast.expr) -> bool:
    """``np``, ``np.random.default_rng``: a reference to something, not a computation."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))


def answer_fragments(ex: Exercise) -> set[str]:
    """The normalised texts a public check must not contain: each answer statement and each of
    its expressions of at least :data:`MIN_CHARS` characters (names, literals and dotted names
    excepted)."""
    found: set[str] = set()
    for stmt in answer_statements(ex):
        if not isinstance(stmt, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With)):
            found.add(ast.unparse(stmt))
        for node in ast.walk(stmt):
            if isinstance(node, ast.expr) and not _dotted(node):
                text = ast.unparse(node)
                if len(text) >= MIN_CHARS:
                    found.add(text)
    return found


def call_shape(call: ast.Call) -> str:
    """The call with its variables erased (``_``) and the functions it calls kept:
    ``F.sdpa(rope(q, pos), v)`` and ``F.sdpa(rope(_q, _p), _v)`` have the same shape."""
    call = copy.deepcopy(call)
    keep: set[int] = set()
    for node in ast.walk(call):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, ast.Attribute):
                func = func.value
            keep.add(id(func))
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and id(node) not in keep:
            node.id = "_"
    return ast.unparse(call)


def _call_shapes(nodes: Iterable[ast.AST]) -> set[str]:
    return {call_shape(n) for root in nodes for n in ast.walk(root) if isinstance(n, ast.Call)}


def answer_shapes(ex: Exercise) -> set[str]:
    """The shapes (:func:`call_shape`) of the answer's calls, at least
    :data:`SHAPE_MIN_CHARS` long."""
    return {s for s in _call_shapes(answer_statements(ex)) if len(s) >= SHAPE_MIN_CHARS}


def normalised(src: str) -> str:
    """``src`` as :mod:`ast` writes it back (the text itself if it does not parse)."""
    tree = _parse(src)
    return ast.unparse(tree) if tree is not None else " ".join(src.split())


def leaks(ex: Exercise, checks: Iterable[str] | None = None) -> list[tuple[int, str]]:
    """``(index of the public check, fragment of the answer it contains)`` for each leak, the
    longest fragment per check; ``checks`` defaults to the exercise's public checks."""
    fragments = sorted(answer_fragments(ex), key=len, reverse=True)
    shapes = answer_shapes(ex)
    out: list[tuple[int, str]] = []
    for k, src in enumerate(ex.tests if checks is None else checks):
        text = normalised(src)
        hit = next((f for f in fragments if f in text), None)
        tree = _parse(src)
        if hit is None and tree is not None:
            hit = next(iter(sorted(_call_shapes([tree]) & shapes, key=len, reverse=True)), None)
        if hit is not None:
            out.append((k, hit))
    return out
