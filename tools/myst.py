"""Reading the book's MyST Markdown chapters: the character classes of Chinese text and the
chapters' fenced blocks (code cells, directives), one definition shared by the tools, the Sphinx
extensions and the tests.

The fenced blocks come from markdown-it-py, the parser myst-parser itself builds on (CommonMark
with MyST's ``:::`` colon fences), so a fence is closed where Sphinx closes it.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

#: A Chinese character (the CJK unified ideographs), for "is this text Chinese?".
HAN = "\u4e00-\u9fff"
#: Chinese text in the wide sense: radicals, ideographs (also the compatibility block), CJK
#: symbols and punctuation (。、「」), full-width forms (，？！). Where a line break between two of
#: these is no space (book_sphinx.cjk, the exported notebooks).
CJK = "\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
HAN_RE = re.compile(f"[{HAN}]")
CJK_RE = re.compile(f"[{CJK}]")

#: The opening fence of a code cell (jupytext's ``md:myst``).
CODE_CELL_START = re.compile(r"^```\{code-cell\}")
#: A directive's name and argument in a fence's info string: ``{exercise}``, ``{solution} ex-a``.
DIRECTIVE_RE = re.compile(r"^\{(?P<name>[\w-]+)\}\s*(?P<arg>.*)$")


@dataclass(frozen=True)
class Fence:
    """A fenced block at the top level of a Markdown text: its info string (``{code-cell}
    ipython3``, ``{exercise}``), its body (what lies between the fences) and its lines
    ``start`` (the opening fence) to ``end`` (after the closing fence), counted from 0."""

    info: str
    body: str
    start: int
    end: int

    @property
    def directive(self) -> str | None:
        """The directive's name (``exercise``), or None for a plain code fence."""
        m = DIRECTIVE_RE.match(self.info.strip())
        return m.group("name") if m else None

    @property
    def argument(self) -> str:
        m = DIRECTIVE_RE.match(self.info.strip())
        return m.group("arg").strip() if m else ""


@functools.lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return MarkdownIt("commonmark").use(colon_fence_plugin).use(dollarmath_plugin)


@functools.lru_cache(maxsize=16)
def _tokens(text: str) -> tuple:
    """markdown-it-py's block tokens of ``text``, parsed once for :func:`fences` and
    :func:`math_blocks` (the prose checks and the notebook writer ask for both)."""
    return tuple(_parser().parse(text))


def fences(text: str) -> list[Fence]:
    """The fenced blocks (backticks, tildes or MyST's colons) at the top level of ``text``."""
    return [Fence(tok.info, tok.content, tok.map[0], tok.map[1])
            for tok in _tokens(text)
            if tok.type in ("fence", "colon_fence") and tok.level == 0 and tok.map]


def math_blocks(text: str) -> list[tuple[int, int]]:
    """The lines ``(start, end)`` of each display-math block (``$$ … $$``) at the top level."""
    return [(tok.map[0], tok.map[1]) for tok in _tokens(text)
            if tok.type in ("math_block", "math_block_label") and tok.level == 0 and tok.map]


def without_code_cells(text: str) -> str:
    """The Markdown ``text`` with every code cell removed (its fences and its body)."""
    lines = text.split("\n")
    for f in reversed(fences(text)):
        if f.directive == "code-cell":
            del lines[f.start:f.end]
    return "\n".join(lines)


def read_notebook(path: Path):
    """The chapter at ``path`` as a notebook, as jupytext reads MyST Markdown."""
    import jupytext

    return jupytext.read(path, fmt="md:myst")
