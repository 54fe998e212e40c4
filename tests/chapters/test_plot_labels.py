"""Plot labels are words in the reader's language, before anything is built.

``book.label(en, zh)`` picks the edition's label; given a variable as its English side, a
legend shows whatever that variable holds, and in the appendix it held the benchmark's JSON
keys (``kv_cache``, ``fused_3d``: en review m3) while the zh edition got words. Each call's
English side is written out: a string, a list of strings, an f-string, or a comprehension
over a table of (English, Chinese) pairs.
"""
from __future__ import annotations

import ast

import pytest

from chapter_source import LANGS, chapter_files, code_cells, read_notebook


def _label_calls(source: str):
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: not this test's business
        return
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "label" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "book" and node.args):
            yield node


@pytest.mark.parametrize("lang", LANGS)
def test_plot_labels_spell_out_their_english_words(lang):
    bad = []
    for path in chapter_files(lang):
        for k, source, _ in code_cells(read_notebook(path)):
            for call in _label_calls(source):
                en = call.args[0]
                if isinstance(en, ast.Name) or (
                        isinstance(en, (ast.List, ast.Tuple))
                        and any(isinstance(e, ast.Name) for e in en.elts)):
                    bad.append(f"{path.name} code cell {k}: book.label({ast.unparse(en)}, ...)")
    assert not bad, "English labels taken from variables (data keys?):\n" + "\n".join(bad)
