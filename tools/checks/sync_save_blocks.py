"""Keep the book's ``# @save`` cells identical to the ``d2lmini`` package, and repair them.

A chapter teaches a function or class of the library by writing it out in a code cell whose
first line is ``# @save``; the package is the source of truth. This tool regenerates every
definition of such a cell, in both editions, from the package source::

    python -m tools.checks.sync_save_blocks --check   # exit 1 with a diff where a cell differs
    python -m tools.checks.sync_save_blocks --write   # rewrite the cells that differ

A definition is a top-level ``def``, ``class`` or assignment of the cell; the package's is the
one of the same name in ``d2lmini/*.py``. Regenerating keeps what belongs to the chapter:

* its docstrings, as the cell writes them (usually shorter than the package's);
* its comments, line by line, on every line whose code is unchanged (the Chinese edition
  comments in Chinese); a changed or new line takes the package's line, comment included.

A statement of the package whose first line ends with the comment ``# @check`` (an argument
check: an ``if ...: raise``, a ``check_*`` call, even a whole method) is the package's alone:
the chapter omits it, so that the cell shows the algorithm and the package still fails with a
clear error at its public entry points. Every other line must match.

It fails when a ``@save`` name is not defined in the package or is defined in two of its
modules, and when the package's docstring of a mirrored ``def``/``class`` does not point back
to the section that teaches it with a line ``Taught in :ref:`<label>`.`` (the label of the
section holding the cell; the API pages render these docstrings inside each edition).
"""
from __future__ import annotations

import argparse
import ast
import difflib
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from tools.myst import CODE_CELL_START

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "d2lmini"
BOOK = ROOT / "book"
LANGS = ("zh", "en")

LABEL = re.compile(r"^\(([A-Za-z0-9_:.\-]+)\)=\s*$")
DEF_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Definition:
    """A top-level definition of a package module: its name, module and source lines."""

    name: str
    module: str
    source: str
    docstring: str | None  # of a def/class; None for an assignment


def _names(node: ast.stmt) -> list[str]:
    """The names a top-level statement defines (def, class, simple assignments)."""
    if isinstance(node, DEF_NODES):
        return [node.name]
    targets = (node.targets if isinstance(node, ast.Assign) else
               [node.target] if isinstance(node, ast.AnnAssign) else [])
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _segment(lines: list[str], node: ast.stmt) -> str:
    """The full source lines of a top-level statement, decorators included."""
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "".join(lines[start - 1:node.end_lineno])


def package_definitions(package: Path = PACKAGE) -> tuple[dict[str, Definition], list[str]]:
    """Every top-level definition of ``package/*.py`` by name, and the problems found: a
    def/class name, or a public assignment name, defined in two modules."""
    defs: dict[str, Definition] = {}
    problems = []
    for path in sorted(package.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        for node in ast.parse(text).body:
            for name in _names(node):
                if name.startswith("__") or (name.startswith("_") and
                                             not isinstance(node, DEF_NODES)):
                    continue
                doc = ast.get_docstring(node) if isinstance(node, DEF_NODES) else None
                new = Definition(name, path.stem, _segment(lines, node), doc)
                if name in defs and defs[name].module != path.stem:
                    problems.append(f"{name} is defined in two d2lmini modules: "
                                    f"{defs[name].module}.py and {path.stem}.py")
                defs[name] = new
    return defs, problems


# --- merging one definition -----------------------------------------------------------------

def _docstring_spans(tree: ast.AST, prefix: str = "") -> dict[str, tuple[ast.AST, int, int]]:
    """For every def/class (by qualified name): the node and the line span (1-based,
    inclusive) of its docstring, or ``(node, 0, 0)`` when it has none."""
    spans = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, DEF_NODES):
            name = prefix + node.name
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                spans[name] = (node, first.lineno, first.end_lineno)
            else:
                spans[name] = (node, 0, 0)
            spans.update(_docstring_spans(node, name + "."))
    return spans


def with_cell_docstrings(package_src: str, cell_src: str) -> str:
    """The package's source of a definition with the docstrings the cell gives it (for every
    def/class the cell also has; new ones keep the package's docstring)."""
    lines = (package_src.rstrip("\n") + "\n").splitlines(keepends=True)
    cell_lines = (cell_src.rstrip("\n") + "\n").splitlines(keepends=True)
    pkg, cell = _docstring_spans(ast.parse(package_src)), _docstring_spans(ast.parse(cell_src))
    edits = []  # (first line, last line, replacement lines); lines 1-based, inclusive
    for name, (node, start, end) in pkg.items():
        if name not in cell:
            continue
        _, c_start, c_end = cell[name]
        new = cell_lines[c_start - 1:c_end] if c_start else []
        if start:
            edits.append((start, end, new))
        elif new:  # the cell documents what the package does not: insert before the body
            edits.append((node.body[0].lineno, node.body[0].lineno - 1, new))
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start - 1:end] = new
    return "".join(lines)


def _split_comments(src: str) -> list[tuple[str, str]]:
    """Each line as ``(code, comment)``: the code without its trailing ``#`` comment (right
    stripped) and the comment with the spaces before it ('' when there is none)."""
    lines = src.splitlines()
    cols = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.COMMENT:
                cols[tok.start[0]] = tok.start[1]
    except (tokenize.TokenError, IndentationError):
        pass
    out = []
    for i, line in enumerate(lines, start=1):
        col = cols.get(i)
        if col is None:
            out.append((line.rstrip(), ""))
        else:
            code = line[:col].rstrip()
            out.append((code, line[len(code):]))
    return out


def _units(src: str) -> list[tuple[list[str], str, str]]:
    """Lines grouped as ``(full-line comments before it, the line, its code)``; a last unit
    with code ``None`` holds trailing comments."""
    units, pending = [], []
    for (code, comment), line in zip(_split_comments(src), src.splitlines()):
        if not code and comment:
            pending.append(line)
        else:
            units.append((pending, line, code))
            pending = []
    units.append((pending, "", None))
    return units


CHECK_MARK = re.compile(r"#\s*@check\s*$")


def without_checks(src: str) -> str:
    """``src`` without its package-only statements: those whose first line ends with the
    comment ``# @check`` (decorators and the whole body of a marked ``def`` included)."""
    lines = src.splitlines(keepends=True)
    marked = {i for i, (_, comment) in enumerate(_split_comments(src), start=1)
              if CHECK_MARK.search(comment)}
    if not marked:
        return src
    drop: set[int] = set()
    found: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.stmt) and node.lineno in marked:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            drop.update(range(start, node.end_lineno + 1))
            found.add(node.lineno)
            blank = [start - 2, node.end_lineno]  # the lines around it (0-based)
            if all(0 <= i < len(lines) and not lines[i].strip() for i in blank):
                drop.add(node.end_lineno + 1)  # one blank line between its neighbours
    if marked - found:
        raise ValueError(f"'# @check' marks a line that starts no statement: line "
                         f"{min(marked - found)} of\n{src}")
    out = "".join(line for i, line in enumerate(lines, start=1) if i not in drop)
    try:
        ast.parse(out)
    except SyntaxError as err:
        raise ValueError(f"without its '# @check' statements a block is empty ({err}); mark "
                         f"the whole statement instead:\n{src}") from err
    return out


def merge(cell_src: str, package_src: str) -> str:
    """The cell's definition regenerated from the package's: package code without its
    ``# @check`` statements, cell docstrings, and the cell's comments on unchanged lines. Both
    arguments and the result end without a newline."""
    target = with_cell_docstrings(without_checks(package_src), cell_src)
    cell_units, pkg_units = _units(cell_src), _units(target)
    matcher = difflib.SequenceMatcher(None, [u[2] for u in cell_units],
                                      [u[2] for u in pkg_units], autojunk=False)
    out = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for comments, line, code in (cell_units[i1:i2] if op == "equal" else
                                     pkg_units[j1:j2] if op in ("replace", "insert") else []):
            out.extend(comments)
            if code is not None:
                out.append(line)
    return "\n".join(out).rstrip("\n")


# --- chapters ---------------------------------------------------------------------------------

@dataclass
class SaveCell:
    """A ``# @save`` cell of a chapter: its body's line range in the file and its section."""

    start: int  # index of the first body line in the file's lines
    end: int  # index after the last body line
    label: str | None


def save_cells(lines: list[str]) -> list[SaveCell]:
    cells, label, i = [], None, 0
    while i < len(lines):
        m = LABEL.match(lines[i])
        if m:
            label = m.group(1)
        if CODE_CELL_START.match(lines[i]):
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != "```":
                j += 1
            if i + 1 < j and lines[i + 1].startswith("# @save"):
                cells.append(SaveCell(i + 1, j, label))
            i = j
        i += 1
    return cells


def sync_cell(body: str, defs: dict[str, Definition]) -> tuple[str, list[tuple[str, str]]]:
    """The regenerated cell body and the ``(name, problem)`` pairs found."""
    try:
        tree = ast.parse(body)
    except SyntaxError as err:
        return body, [("", f"the cell does not parse: {err}")]
    lines = body.splitlines(keepends=True)
    problems = []
    for node in reversed(tree.body):
        names = _names(node)
        if not names:
            continue
        if names[0] not in defs:
            problems.append((names[0], "defined in a # @save cell but not in d2lmini"))
            continue
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        old = "".join(lines[start - 1:node.end_lineno]).rstrip("\n")
        new = merge(old, defs[names[0]].source.rstrip("\n"))
        lines[start - 1:node.end_lineno] = [new + "\n"]
    return "".join(lines), problems


def sync_file(path: Path, defs: dict[str, Definition]) -> tuple[str, str, list[str]]:
    """``(old text, new text, problems)`` of one chapter."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    problems = []
    for cell in reversed(save_cells(lines)):
        body = "".join(lines[cell.start:cell.end])
        new, found = sync_cell(body, defs)
        where = f"{_shown(path)}:{cell.start + 1}"
        problems += [f"{where}: {name}: {msg}" if name else f"{where}: {msg}"
                     for name, msg in found]
        for node in ast.parse(new).body if not found else []:
            name = (_names(node) or [None])[0]
            if isinstance(node, DEF_NODES) and name in defs and cell.label and (
                    f"Taught in :ref:`{cell.label}`" not in (defs[name].docstring or "")):
                problems.append(f"{where}: {name}: the docstring in d2lmini/"
                                f"{defs[name].module}.py must say \"Taught in "
                                f":ref:`{cell.label}`.\"")
        lines[cell.start:cell.end] = [new]
    return text, "".join(lines), problems


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def chapters(book: Path = BOOK) -> list[Path]:
    return [p for lang in LANGS for p in sorted((book / lang).glob("*.md"))]


def main(argv: list[str] | None = None, *, package: Path = PACKAGE,
         paths: list[Path] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="report differences, change nothing")
    mode.add_argument("--write", action="store_true", help="rewrite the cells that differ")
    args = parser.parse_args(argv)
    defs, problems = package_definitions(package)
    changed = []
    for path in paths if paths is not None else chapters():
        old, new, found = sync_file(path, defs)
        problems += found
        if new != old:
            changed.append(path)
            if args.write:
                path.write_text(new, encoding="utf-8")
            else:
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(keepends=True), new.splitlines(keepends=True),
                    f"{_shown(path)} (book)", f"{_shown(path)} (from d2lmini)"))
    for problem in problems:
        print(problem, file=sys.stderr)
    if changed:
        verb = "rewrote" if args.write else "differ from d2lmini (run --write)"
        print(f"# @save cells: {len(changed)} file(s) {verb}: "
              + ", ".join(_shown(p) for p in changed), file=sys.stderr)
    return 1 if problems or (changed and args.check) else 0


if __name__ == "__main__":
    raise SystemExit(main())
