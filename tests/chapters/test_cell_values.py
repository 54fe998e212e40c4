"""No code cell ends with a call whose value the page would print as a raw Python string:
``book.choose`` returns the phrase it glues, so a cell that ends with it ends with ``;``."""
from __future__ import annotations

import ast

import pytest

from chapter_source import BOOK, LANGS, pair_names, read_notebook

PHRASE_FUNCS = {"book.choose"}
PAGES = [n for n in pair_names() if all((BOOK / lang / n).exists() for lang in LANGS)]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", PAGES)
def test_no_cell_shows_a_chosen_phrase_as_a_string(lang, name):
    shown = []
    for index, cell in enumerate(read_notebook(BOOK / lang / name).cells):
        if cell.cell_type != "code":
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        last = body[-1] if body else None
        if (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                and ast.unparse(last.value.func) in PHRASE_FUNCS
                and not cell.source.rstrip().endswith(";")):
            shown.append(index)
    assert not shown, f"{lang}/{name}: cells {shown} end with book.choose(...) without ';'"
