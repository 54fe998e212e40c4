"""A chapter as a notebook of exercises: read once from its MyST source, written three ways.

The chapters write exercises with sphinx-exercise (CONTRIBUTING.md, "Exercises"): an
``{exercise}`` block, then either a ``{solution}`` block or ``{solution-start}`` … prose and code
cells … ``{solution-end}``. An exercise whose answer can be computed carries autograder tests:
code cells at the end of its gated solution, tagged ``remove-cell`` (so the pages do not show
them) and either ``exercise-test`` (a public check: the student's notebook runs it, so it checks
shapes, types and a case one can verify by hand, never the solution's own expression) or
``exercise-test-hidden`` (a hidden test: only the grader runs it, on other sizes, seeds and edge
cases). They are plain ``assert`` statements on names the solution defines; the book build runs
both kinds against the worked solution, so a test that the solution fails breaks the build.

:func:`read_chapter` parses a chapter into :class:`Segment` objects; :func:`full_cells`,
:func:`student_cells` and :func:`otter_master_cells` turn them into notebook cells for the
reader's notebook (solutions as collapsible blocks), the student's notebook (solutions removed;
an answer cell with the names the tests check) and otter-grader's assignment format.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from tools.bookmeta import ROOT, notebooks
from tools.myst import CJK_RE, fences, math_blocks, read_notebook

TEST_TAG = "exercise-test"
HIDDEN_TEST_TAG = "exercise-test-hidden"
DIRECTIVES = ("exercise", "solution", "solution-start", "solution-end")
OPTION_RE = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")

WORDS = {
    "zh": {"exercise": "练习", "solution": "解答",
           "answer": "# 你的答案：把每个 ... 换成你的代码（自动评分检查：{names}）"},
    "en": {"exercise": "Exercise", "solution": "Solution",
           "answer": "# Your answer: replace each ... with your code (graded: {names})"},
}


@dataclass
class Segment:
    """One piece of a chapter, in order: ``md`` (Markdown text), ``code`` (a code cell),
    ``test`` (a public autograder check), ``hidden-test`` (a hidden autograder test), or one of
    the sphinx-exercise directives."""

    kind: str
    text: str = ""
    label: str = ""
    cell: nbformat.NotebookNode | None = None
    options: dict = field(default_factory=dict)


@dataclass
class Exercise:
    label: str
    number: str  # as on the web site: '6.2' in a chapter, '3' in the appendix
    text: str
    gated: bool
    solution: list[Segment]
    tests: list[str]  # the public checks (``exercise-test``)
    hidden_tests: list[str] = field(default_factory=list)  # ``exercise-test-hidden``

    @property
    def all_tests(self) -> list[str]:
        """The public checks, then the hidden tests."""
        return [*self.tests, *self.hidden_tests]

    def checked_names(self) -> list[tuple[str, str]]:
        """``(name, skeleton)`` for each name the tests read that the solution's code defines,
        in the order the solution defines them; the skeleton is ``name = ...`` or the ``def``
        line of a function with ``...`` as its body."""
        used: set[str] = set()
        for src in self.all_tests:
            names = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name)]
            # a name the test binds itself (a loop or comprehension variable) is not an answer
            own = {n.id for n in names if isinstance(n.ctx, ast.Store)}
            used |= {n.id for n in names if isinstance(n.ctx, ast.Load)} - own
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for seg in self.solution:
            if seg.kind != "code":
                continue
            try:
                tree = ast.parse(_python_only(seg.cell.source))
            except SyntaxError:
                continue
            for stmt in tree.body:
                for name, skeleton in _bindings(stmt):
                    if name in used and name not in seen:
                        seen.add(name)
                        out.append((name, skeleton))
        return out


# ---------------------------------------------------------------------------- reading
def read_chapter(path: Path) -> tuple[nbformat.NotebookNode, list[Segment]]:
    """The chapter's notebook (as jupytext reads it) and its segments."""
    nb = read_notebook(path)
    segments: list[Segment] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            segments += _markdown_segments(cell.source)
        elif cell.cell_type == "code":
            tags = cell.metadata.get("tags", [])
            kind = ("hidden-test" if HIDDEN_TEST_TAG in tags else
                    "test" if TEST_TAG in tags else "code")
            segments.append(Segment(kind, cell.source, cell=cell))
        else:
            segments.append(Segment("md", cell.source))
    return nb, segments


def _markdown_segments(text: str) -> list[Segment]:
    """A Markdown cell split into its exercise and solution directives (the fences
    :func:`tools.myst.fences` finds) and the Markdown between them."""
    lines = text.split("\n")
    out: list[Segment] = []

    def markdown(first: int, last: int) -> None:
        chunk = "\n".join(lines[first:last])
        if chunk.strip():
            out.append(Segment("md", chunk.strip("\n")))

    done = 0
    for fence in fences(text):
        if fence.directive not in DIRECTIVES:
            continue
        markdown(done, fence.start)
        options, body = {}, []
        for ln in fence.body.rstrip("\n").split("\n"):
            om = OPTION_RE.match(ln)
            if om and not body:
                options[om.group("key")] = om.group("value").strip()
            else:
                body.append(ln)
        label = options.get("label", "") or fence.argument
        out.append(Segment(fence.directive, "\n".join(body).strip("\n"), label=label,
                           options=options))
        done = fence.end
    markdown(done, len(lines))
    return out


def numbering(path: Path) -> tuple[str, int]:
    """How the page's exercises are numbered on the web site and in the PDF: ``(prefix, first)``.

    The chapters are numbered (``_toc.yml``), so Sphinx numbers their exercises per chapter like
    their figures and equations: chapter 6's are 6.1, 6.2, ... (``("6.", 1)``). Pages outside the
    numbered part (the appendix) share one counter in the order of the table of contents
    (``("", first)``). The notebooks use the same numbers as the site and the PDF.
    """
    from tools.bookmeta import chapter_numbers, toc_files

    chapters = chapter_numbers()
    if path.stem in chapters:
        return f"{chapters[path.stem]}.", 1
    names = toc_files()
    if path.stem not in names:
        return "", 1
    count = 0
    for name in names[:names.index(path.stem)]:
        page = path.parent / f"{name}.md"
        if name not in chapters and page.exists():
            count += sum(seg.kind == "exercise"
                         for seg in _markdown_segments(page.read_text(encoding="utf-8")))
    return "", count + 1


def exercises(segments: list[Segment], first: int = 1, prefix: str = "") -> list[Exercise]:
    """The chapter's exercises, numbered ``prefix`` + ``first``, ``first + 1``, ... (see
    :func:`numbering`), with their solutions and tests."""
    found: list[Exercise] = []
    i = 0
    while i < len(segments):
        seg = segments[i]
        if seg.kind != "exercise":
            i += 1
            continue
        ex = Exercise(seg.label, f"{prefix}{first + len(found)}", seg.text, False, [], [])
        j = i + 1
        if j < len(segments) and segments[j].kind == "solution":
            ex.solution = [Segment("md", segments[j].text)]
            j += 1
        elif j < len(segments) and segments[j].kind == "solution-start":
            ex.gated = True
            j += 1
            while j < len(segments) and segments[j].kind != "solution-end":
                if segments[j].kind == "test":
                    ex.tests.append(segments[j].text)
                elif segments[j].kind == "hidden-test":
                    ex.hidden_tests.append(segments[j].text)
                else:
                    ex.solution.append(segments[j])
                j += 1
            j += 1
        found.append(ex)
        i = j
    return found


def _python_only(src: str) -> str:
    """The source with IPython magics (``%``, ``!``) blanked, for ``ast``."""
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in src.split("\n"))


def _bindings(stmt: ast.stmt) -> list[tuple[str, str]]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(stmt.name, f"def {stmt.name}({ast.unparse(stmt.args)}):\n    ...")]
    if isinstance(stmt, ast.ClassDef):
        return [(stmt.name, f"class {stmt.name}:\n    ...")]
    if isinstance(stmt, (ast.With, ast.If, ast.For, ast.While, ast.Try)):
        # names bound inside a block at the top level (``with torch.no_grad(): x = ...``)
        inner = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
        for handler in getattr(stmt, "handlers", []):
            inner += handler.body
        found = [b for s in inner for b in _bindings(s)]
        if isinstance(stmt, ast.For):
            found = [(n.id, f"{n.id} = ...") for n in ast.walk(stmt.target)
                     if isinstance(n, ast.Name)] + found
        return found
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        targets = [stmt.target]
    names: list[str] = []
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Name):
                names.append(n.id)
    return [(n, f"{n} = ...") for n in names]


# ---------------------------------------------------------------------------- writing
def join_cjk_breaks(text: str) -> str:
    """Drop the source's line breaks between two Chinese characters in Markdown prose (Jupyter,
    like a browser, renders them as spaces); code blocks and display math are left alone."""
    lines = text.split("\n")
    blocks = [(f.start, f.end) for f in fences(text)] + math_blocks(text)
    fixed = {k for start, end in blocks for k in range(start, end)}
    keep = [k not in fixed for k in range(len(lines))]  # may the break after line k be joined?
    res = lines[0] if lines else ""
    for k in range(1, len(lines)):
        prev, cur = lines[k - 1], lines[k]
        if (keep[k - 1] and keep[k] and prev and cur and not prev.lstrip().startswith("#")
                and CJK_RE.match(prev[-1]) and CJK_RE.match(cur[0])):
            res += cur
        else:
            res += "\n" + cur
    return res


def _md(text: str, lang: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(join_cjk_breaks(text) if lang == "zh" else text)


def _exercise_md(ex: Exercise, lang: str) -> str:
    return f"**{WORDS[lang]['exercise']} {ex.number}** `{ex.label}`\n\n{ex.text}"


def answer_skeleton(ex: Exercise, lang: str) -> str:
    """The student's answer cell of a graded exercise."""
    names = ex.checked_names()
    head = WORDS[lang]["answer"].format(names=", ".join(n for n, _ in names))
    return head + "\n" + "\n".join(s for _, s in names)


def _skip_solution(segments: list[Segment], i: int) -> int:
    """Index of the last segment of the solution of the exercise at ``i`` (``i`` if none)."""
    j = i + 1
    if j < len(segments) and segments[j].kind == "solution":
        return j
    if j < len(segments) and segments[j].kind == "solution-start":
        while j < len(segments) and segments[j].kind != "solution-end":
            j += 1
        return j
    return i


class _Writer:
    """Collects notebook cells; consecutive Markdown pieces become one cell."""

    def __init__(self, lang: str) -> None:
        self.lang, self.cells, self.md = lang, [], []

    def flush(self) -> None:
        if self.md:
            self.cells.append(_md("\n\n".join(self.md), self.lang))
            self.md = []

    def text(self, text: str) -> None:
        self.md.append(text)

    def cell(self, cell) -> None:
        self.flush()
        self.cells.append(cell)

    def done(self) -> list:
        self.flush()
        return self.cells


def _cells(segments: list[Segment], lang: str, *, solutions: bool, first: int,
           prefix: str) -> list:
    exs = {ex.label: ex for ex in exercises(segments, first, prefix)}
    out = _Writer(lang)
    i = 0
    while i < len(segments):
        seg = segments[i]
        if seg.kind == "md":
            out.text(seg.text)
        elif seg.kind == "code":
            out.cell(_code(seg.cell))
        elif seg.kind == "exercise":
            ex = exs[seg.label]
            out.text(_exercise_md(ex, lang))
            if not solutions:
                i = _skip_solution(segments, i)
                if ex.all_tests:
                    out.cell(nbformat.v4.new_code_cell(answer_skeleton(ex, lang)))
        elif seg.kind == "solution":
            out.text(f"<details><summary><b>{WORDS[lang]['solution']}</b></summary>\n\n"
                     f"{seg.text}\n\n</details>")
        elif seg.kind == "solution-start":
            out.text(f"**{WORDS[lang]['solution']}**")
        # "test" and "hidden-test" cells belong to the autograder (otter_master_cells);
        # "solution-end" is a marker
        i += 1
    return out.done()


def full_cells(segments: list[Segment], lang: str, first: int = 1, prefix: str = "") -> list:
    """The reader's notebook: the chapter with its solutions (collapsible when they are prose);
    ``prefix``, ``first``: how its exercises are numbered (:func:`numbering`)."""
    return _cells(segments, lang, solutions=True, first=first, prefix=prefix)


def student_cells(segments: list[Segment], lang: str, first: int = 1, prefix: str = "") -> list:
    """The student's notebook: every solution removed; graded exercises get an answer cell."""
    return _cells(segments, lang, solutions=False, first=first, prefix=prefix)


PUBLIC_POINTS = 1  # an exercise's public checks together, when it has hidden tests
HIDDEN_POINTS = 3  # its hidden tests together


def test_points(ex: Exercise) -> list[float]:
    """The points of each test cell of ``ex``, public checks first (``ex.all_tests``' order).

    An exercise with hidden tests is worth ``PUBLIC_POINTS + HIDDEN_POINTS`` (4): its public
    checks share 1 point, its hidden tests 3, so that a notebook that passes only the checks the
    student can run gets a quarter of the points. An exercise with public checks only is worth one
    point per check.
    """
    if not ex.hidden_tests:
        return [1.0] * len(ex.tests)
    public = [PUBLIC_POINTS / len(ex.tests)] * len(ex.tests) if ex.tests else []
    return public + [HIDDEN_POINTS / len(ex.hidden_tests)] * len(ex.hidden_tests)


def otter_test_source(src: str, hidden: bool, points: float) -> str:
    """A test cell for ``otter assign``: the test's code after a test configuration block (so
    that no first-line comment of the test is read as otter's ``# HIDDEN`` marker)."""
    config = f"hidden: {'true' if hidden else 'false'}\npoints: {points!r}"
    return f'""" # BEGIN TEST CONFIG\n{config}\n""" # END TEST CONFIG\n{src}'


def otter_master_cells(segments: list[Segment], lang: str, config: dict, first: int = 1,
                       prefix: str = "") -> list:
    """The chapter in otter-grader's assignment format (``otter assign``).

    A graded exercise (one with tests) is a question: the exercise text, a prompt (the answer
    cell), its solution (prose and code), its tests (public checks, then hidden tests; points as
    :func:`test_points`). The solutions of the other exercises are left out of both notebooks
    otter writes; the reader's notebook and the PDF have them.
    """
    import yaml

    exs = {ex.label: ex for ex in exercises(segments, first, prefix)}
    out = _Writer(lang)
    out.cell(nbformat.v4.new_raw_cell(
        "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)))
    i = 0
    while i < len(segments):
        seg = segments[i]
        if seg.kind == "md":
            out.text(seg.text)
        elif seg.kind == "code":
            out.cell(_code(seg.cell))
        elif seg.kind == "exercise":
            ex = exs[seg.label]
            i = _skip_solution(segments, i)
            if ex.all_tests:
                _otter_question(out, ex, lang)
            else:
                out.text(_exercise_md(ex, lang))
        i += 1
    return out.done()


def _otter_question(out: _Writer, ex: Exercise, lang: str) -> None:
    """One graded exercise as an otter question: text, prompt, solution, tests."""
    raw = lambda text: out.cell(nbformat.v4.new_raw_cell(text))  # noqa: E731
    points = test_points(ex)
    raw(f"# BEGIN QUESTION\nname: {ex.label}\npoints: {sum(points)!r}")
    out.text(_exercise_md(ex, lang))
    raw("# BEGIN PROMPT")
    out.cell(nbformat.v4.new_code_cell(answer_skeleton(ex, lang)))
    raw("# END PROMPT")
    raw("# BEGIN SOLUTION")
    for s in ex.solution:
        if s.kind == "md":
            out.text(s.text)
        elif s.kind == "code":
            # otter keeps a solution's code cell and removes the marked lines
            cell = _code(s.cell)
            cell.source = f"# BEGIN SOLUTION NO PROMPT\n{cell.source}\n# END SOLUTION"
            out.cell(cell)
    raw("# END SOLUTION")
    raw("# BEGIN TESTS")
    hidden = [False] * len(ex.tests) + [True] * len(ex.hidden_tests)
    for src, h, pts in zip(ex.all_tests, hidden, points):
        out.cell(nbformat.v4.new_code_cell(otter_test_source(src, h, pts)))
    raw("# END TESTS")
    raw("# END QUESTION")


def _code(cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    new = nbformat.v4.new_code_cell(cell.source)
    meta = {k: v for k, v in cell.metadata.items() if k in ("tags", "mystnb")}
    new.metadata.update(meta)
    return new


def graded_exercises(lang: str, chapter: str) -> list[Exercise]:
    """The exercises of ``book/<lang>/<chapter>.md`` that have tests (the graded ones)."""
    _, segments = read_chapter(ROOT / "book" / lang / f"{chapter}.md")
    return [ex for ex in exercises(segments) if ex.all_tests]


def graded_chapters(lang: str) -> list[str]:
    """The chapters (toc order) that have at least one exercise with tests."""
    return [name for name in notebooks(lang) if graded_exercises(lang, name)]
