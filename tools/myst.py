"""Reading the book's MyST Markdown chapters: the character classes of Chinese text and the
fences of code cells, one definition shared by the tools, the Sphinx extensions and the tests.
"""
from __future__ import annotations

import re
from pathlib import Path

#: A Chinese character (the CJK unified ideographs), for "is this text Chinese?".
HAN = "\u4e00-\u9fff"
#: Chinese text in the wide sense: radicals, ideographs (also the compatibility block), CJK
#: symbols and punctuation (。、「」), full-width forms (，？！). Where a line break between two of
#: these is no space (book_sphinx.cjk, the exported notebooks).
CJK = "\u2e80-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
HAN_RE = re.compile(f"[{HAN}]")
CJK_RE = re.compile(f"[{CJK}]")

#: The opening fence of a code cell (jupytext's ``md:myst``), and a whole code cell.
CODE_CELL_START = re.compile(r"^```\{code-cell\}")
CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```\s*$", re.M | re.S)


def without_code_cells(text: str) -> str:
    """The Markdown ``text`` with every code cell removed (its fences and its body)."""
    return CODE_CELL.sub("", text)


def read_notebook(path: Path):
    """The chapter at ``path`` as a notebook, as jupytext reads MyST Markdown."""
    import jupytext

    return jupytext.read(path, fmt="md:myst")
