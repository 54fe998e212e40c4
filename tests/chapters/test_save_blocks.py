"""Every ``# @save`` cell in both editions defines exactly what ``d2lmini`` ships.

The check is ``python -m tools.checks.sync_save_blocks --check`` (``--write`` repairs the cells);
the meta-tests below show that the checker finds a difference and that the writer repairs it while
keeping a cell's docstrings and its comments on unchanged lines.
"""
from __future__ import annotations

import textwrap

import pytest

from tools.checks import sync_save_blocks as sync
from chapter_source import ROOT


def test_save_cells_equal_d2lmini(capsys):
    status = sync.main(["--check"])
    out, err = capsys.readouterr()
    assert status == 0, out + err


def _package(tmp_path, source: str, name: str = "mod"):
    package = tmp_path / "pkg"
    package.mkdir(exist_ok=True)
    (package / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return package


def _chapter(tmp_path, cell: str, label: str = "sec-demo"):
    path = tmp_path / "chapter.md"
    path.write_text(f"# Demo\n\n({label})=\n## A section\n\nProse.\n\n```{{code-cell}} ipython3\n"
                    f"# @save\n{textwrap.dedent(cell).strip()}\n```\n\nMore prose.\n",
                    encoding="utf-8")
    return path


PACKAGE = '''
    SCALE = 2


    def scaled(x, factor=SCALE):
        """Multiply by a factor.

        Taught in :ref:`sec-demo`.
        """
        y = x * factor  # the product
        return y + 0
    '''


def test_merge_keeps_cell_docstrings_and_comments_on_unchanged_lines():
    cell = '''def scaled(x, factor=SCALE):
    """乘以一个因子。"""
    # 先相乘
    y = x * factor  # 乘积
    return y'''
    package = textwrap.dedent(PACKAGE).split("\n\n\n")[1].strip()
    merged = sync.merge(cell, package)
    assert merged == '''def scaled(x, factor=SCALE):
    """乘以一个因子。"""
    # 先相乘
    y = x * factor  # 乘积
    return y + 0'''  # the changed line is the package's


def test_merge_inserts_the_lines_the_cell_lacks_with_the_package_comments():
    cell = 'def f(a):\n    """Doc."""\n    return a'
    package = 'def f(a):\n    """Long doc."""\n    a = a + 1  # one more\n    return a'
    assert sync.merge(cell, package) == (
        'def f(a):\n    """Doc."""\n    a = a + 1  # one more\n    return a')


def test_checker_reports_a_difference_and_writer_repairs_it(tmp_path, capsys):
    package = _package(tmp_path, PACKAGE)
    chapter = _chapter(tmp_path, '''
        SCALE = 3  # the cell's own constant


        def scaled(x, factor=SCALE):
            """Doc of the book."""
            y = x * factor  # 中文注释
            return y''')
    assert sync.main(["--check"], package=package, paths=[chapter]) == 1
    out = capsys.readouterr().out
    assert "-SCALE = 3" in out and "+SCALE = 2" in out  # module-level assignments too
    assert "-    return y" in out and "+    return y + 0" in out
    assert sync.main(["--write"], package=package, paths=[chapter]) == 0
    text = chapter.read_text(encoding="utf-8")
    assert '"""Doc of the book."""' in text and "# 中文注释" in text and "return y + 0" in text
    assert "Taught in" not in text  # the package's docstring stays in the package
    assert sync.main(["--check"], package=package, paths=[chapter]) == 0  # a fixed point


def test_a_name_missing_from_the_package_fails(tmp_path, capsys):
    package = _package(tmp_path, PACKAGE)
    chapter = _chapter(tmp_path, "def nowhere():\n    return 1")
    assert sync.main(["--check"], package=package, paths=[chapter]) == 1
    assert "nowhere: defined in a # @save cell but not in d2lmini" in capsys.readouterr().err


def test_a_name_defined_in_two_modules_fails(tmp_path, capsys):
    package = _package(tmp_path, PACKAGE)
    _package(tmp_path, "def scaled(x):\n    return x\n", name="other")
    chapter = _chapter(tmp_path, "def scaled(x, factor=SCALE):\n    return x * factor + 0")
    assert sync.main(["--check"], package=package, paths=[chapter]) == 1
    assert "scaled is defined in two d2lmini modules" in capsys.readouterr().err


def test_a_package_docstring_must_point_to_the_teaching_section(tmp_path, capsys):
    package = _package(tmp_path, PACKAGE)
    chapter = _chapter(tmp_path, PACKAGE,
                       label="sec-elsewhere")
    assert sync.main(["--check"], package=package, paths=[chapter]) == 1
    assert "must say \"Taught in :ref:`sec-elsewhere`.\"" in capsys.readouterr().err


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_pointer_names_a_label_of_the_edition(lang):
    """The ``Taught in :ref:`label``` lines of the package resolve in each edition."""
    import re

    labels = set()
    for path in (ROOT / "book" / lang).glob("*.md"):
        labels |= set(re.findall(r"^\(([\w-]+)\)=\s*$", path.read_text(encoding="utf-8"), re.M))
    pointers = set()
    for path in (ROOT / "d2lmini").glob("*.py"):
        pointers |= set(re.findall(r"Taught in :ref:`([\w-]+)`", path.read_text(encoding="utf-8")))
    assert pointers and pointers <= labels, sorted(pointers - labels)


CHECKED = '''
    def scaled(x, factor=2):
        """Multiply by a factor.

        Taught in :ref:`sec-demo`.
        """
        if factor <= 0:  # @check
            raise ValueError(f"factor must be positive; got {factor}")
        check_number(x, "x")  # @check
        y = x * factor  # the product
        return y + 0
    '''


def test_check_statements_stay_in_the_package_and_out_of_the_chapter(tmp_path, capsys):
    """A ``# @check`` statement is the package's alone: a cell without it is in sync, a cell
    that shows it is rewritten without it, and any other difference still fails."""
    package = _package(tmp_path, CHECKED)
    algorithm = '''
        def scaled(x, factor=2):
            """Doc of the book."""
            y = x * factor  # 乘积
            return y + 0'''
    chapter = _chapter(tmp_path, algorithm)
    assert sync.main(["--check"], package=package, paths=[chapter]) == 0
    _chapter(tmp_path, algorithm.replace("return y + 0", "return y"))
    assert sync.main(["--check"], package=package, paths=[chapter]) == 1
    assert "+    return y + 0" in capsys.readouterr().out  # the algorithm must match
    _chapter(tmp_path, algorithm.replace('"""\n', '"""\n            check_number(x, "x")\n'))
    assert sync.main(["--write"], package=package, paths=[chapter]) == 0
    text = chapter.read_text(encoding="utf-8")
    assert "check_number" not in text and "raise" not in text and "# 乘积" in text


def test_a_checked_method_is_left_out_whole():
    package = textwrap.dedent('''
        class C:
            """Doc."""

            def __post_init__(self) -> None:  # @check
                if self.x < 0:
                    raise ValueError("x")

            def value(self):
                return self.x''').strip()
    assert "__post_init__" not in sync.merge('class C:\n    """Doc."""', package)
    assert sync.without_checks(package).count("\n") == package.count("\n") - 4


def test_a_check_mark_on_a_continuation_line_fails():
    with pytest.raises(ValueError, match="starts no statement"):
        sync.without_checks("def f(a,\n      b):  # @check\n    return a\n")


def _only_checks(node) -> bool:
    """A statement that only validates: a ``raise``, a ``check_*`` call, or an ``if``/``for``/
    ``def`` whose body holds nothing else."""
    import ast

    if isinstance(node, ast.Raise):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name.lstrip("_").startswith("check")
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # a docstring
    if isinstance(node, (ast.If, ast.For, ast.FunctionDef)):
        return all(_only_checks(n) for n in node.body + getattr(node, "orelse", []))
    return False


def test_check_marks_hide_only_argument_checks():
    """The preface says a ``# @save`` cell leaves out only argument checks: every statement
    the package marks ``# @check`` raises or calls a ``check_*`` function, and nothing else."""
    import ast

    marked = 0
    for path in sorted((ROOT / "d2lmini").glob("*.py")):
        src = path.read_text(encoding="utf-8")
        lines = {i for i, (_, comment) in enumerate(sync._split_comments(src), start=1)
                 if sync.CHECK_MARK.search(comment)}
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.stmt) and node.lineno in lines:
                marked += 1
                assert _only_checks(node), f"{path.name}:{node.lineno} is not only a check"
    assert marked, "no statement is marked # @check"
