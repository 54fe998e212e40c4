"""The build's side of "Run in your browser" (tools/build/book_sphinx/browser.py): which code cells
of chapters 2 and 3 run in the page (Pyodide) and what runs of each. A chosen cell must run with
only the standard library, NumPy, SciPy and Matplotlib, after the chosen cells before it; the
browser tests (tests/build/test_browser_run.py) run them in Pyodide."""
from __future__ import annotations

import ast
import base64
import sys
from pathlib import Path

import jupytext
import pytest

from tools.build import build_book
from tools.build.book_sphinx.browser import (BROWSER_PAGES, _inline_labels, allowed_modules,
                                             cjk_subset, constants_of, select_cells, strip_cell)

ROOT = Path(__file__).resolve().parents[2]

LANGS = ("zh", "en")
PAGES = BROWSER_PAGES  # the build's list (tools/build/book_sphinx/browser.py)


def _sources(lang: str, page: str) -> list[str]:
    """The page's code cells as the page shows them (cells tagged remove-cell are not shown)."""
    nb = jupytext.read(ROOT / "book" / lang / f"{page}.md")
    return [c.source for c in nb.cells if c.cell_type == "code"
            and "remove-cell" not in c.metadata.get("tags", [])]


@pytest.fixture(scope="module")
def chosen():
    return {(lang, page): select_cells(_sources(lang, page), lang)
            for lang in LANGS for page in PAGES}


def test_strip_cell_takes_out_what_only_the_page_needs():
    source = ("import numpy as np\nimport torch\nfrom myst_nb import glue\nimport d2lmini as d2l\n"
              "from d2lmini import book\n"
              "\nx = np.ones(3)\nglue('x', float(x.sum()), display=False)\n"
              "book.claim('x_three', x.sum() == 3,\n          'three ones')\nprint(x)\n")
    unavailable: set[str] = set()
    code, dropped = strip_cell(source, allowed_modules(), unavailable)
    assert code == "import numpy as np\n\nx = np.ones(3)\nprint(x)"
    assert dropped == 7
    assert unavailable == {"torch", "glue", "d2l", "book"}
    # names bound in an earlier cell stay unavailable; an assignment from them is kept (the cell
    # then fails to run and is not chosen)
    code, dropped = strip_cell("d2l.set_seed(0)\ny = torch.zeros(2)\n", allowed_modules(),
                               unavailable)
    assert (code, dropped) == ("y = torch.zeros(2)", 1)
    # relative imports and modules outside the allowed ones
    code, _ = strip_cell("from . import a\nimport gensim.models\nimport math\n",
                         allowed_modules(), set())
    assert code == "import math"


def test_strip_cell_writes_each_editions_label():
    source = ("plt.title(book.label(f'offset {k}', f'偏移 {k}'))\n"
              "plt.xlabel(book.label('a', '甲'))\n")
    assert strip_cell(source, allowed_modules(), set(), "zh")[0] == (
        "plt.title(f'偏移 {k}')\nplt.xlabel('甲')")
    assert strip_cell(source, allowed_modules(), set(), "en")[0] == (
        "plt.title(f'offset {k}')\nplt.xlabel('a')")


def test_constants_of():
    code = ("d_model = 100  # width\nmodel = train(d_model)\nnames = ('a', 'b')\n"
            "x, y = 1, 2\nscale = d_model ** 0.5\n")
    assert constants_of(code) == "d_model = 100  # width\nnames = ('a', 'b')"
    assert constants_of("def (") == ""


def test_select_cells_runs_them_in_order():
    sources = ["import numpy as np\nimport torch\nfrom myst_nb import glue",
               "a = np.arange(4)\nprint(a.sum())\nglue('s', 6)",
               "t = torch.ones(2)\nwidth = 8\nunused = 'x'",
               "b = a.reshape(2, 2) * width\nb.shape",
               "raise ValueError('this cell fails wherever it runs')",
               "c = float(np.linalg.det(np.eye(2)))\nc"]
    out = select_cells(sources, "en")
    assert [c["index"] for c in out] == [0, 1, 2, 3, 5]
    assert out[1] == {"index": 1, "code": "a = np.arange(4)\nprint(a.sum())", "dropped": 1,
                      "stdout": "6\n", "constants_only": False}
    # the cell that needs torch lends only the constant a later cell reads
    assert out[2]["code"] == "width = 8\nunused = 'x'" and out[2]["constants_only"]
    assert out[3]["stdout"] == "(2, 2)\n"
    assert out[4]["stdout"] == "1.0\n"


def test_select_cells_refuses_a_broken_runner(monkeypatch):
    monkeypatch.setattr(sys, "executable", str(ROOT / "no-such-python"))
    with pytest.raises((RuntimeError, OSError)):
        select_cells(["x = 1"])


def test_chapters_cells_run_in_the_browser(chosen):
    allowed = allowed_modules()
    for (lang, page), cells in chosen.items():
        sources = _sources(lang, page)
        assert len(cells) >= 10, (lang, page, len(cells))
        for cell in cells:
            tree = ast.parse(cell["code"])
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    assert all(a.name.split(".")[0] in allowed for a in node.names), cell
                elif isinstance(node, ast.ImportFrom):
                    assert node.module.split(".")[0] in allowed, cell
            assert not {"d2l", "book", "torch", "glue"} & {n.id for n in ast.walk(tree)
                                                   if isinstance(n, ast.Name)}, cell
            # what runs is the page's code with lines taken out (and each edition's label
            # written out), never new code
            source = sources[cell["index"]]
            source = _inline_labels(source, ast.parse(source), lang)
            assert all(line in source for line in cell["code"].splitlines()), cell


def test_the_editions_choose_the_same_cells(chosen):
    for page in PAGES:
        assert ([c["index"] for c in chosen["zh", page]]
                == [c["index"] for c in chosen["en", page]]), page


def test_chapter_2s_eight_steps_and_chapter_3s_encodings_run(chosen):
    """The NumPy heart of each chapter is among the chosen cells: every step of chapter 2's
    walk-through, and chapter 3's sinusoidal encoding and its figure."""
    ch2 = "\n".join(c["code"] for c in chosen["en", "mha-numpy"])
    for name in ("X = np.array", "W_Q_1 =", "Q_1, K_1, V_1 =", "scores_1 =", "def softmax",
                 "Z_1 =", "Z = np.concatenate", "H = Z @ W_O", "def multi_head_attention",
                 "def causal_mask"):
        assert name in ch2, name
    ch3 = "\n".join(c["code"] for c in chosen["en", "embeddings-positional-encoding"])
    for name in ("def positional_encoding(", "P = positional_encoding(", "imshow(P"):
        assert name in ch3, name
    first = chosen["en", "mha-numpy"][1]
    assert first["stdout"].startswith("[[1. 0. 1. 0.]"), first


def test_build_packs_pyodide(tmp_path):
    """tools/build/build_book.py copies Pyodide's core from its npm package (the files named in
    PYODIDE_FILES) and copies a file again only when it changed."""
    src = tmp_path / "pyodide"
    src.mkdir()
    for name in build_book.PYODIDE_FILES:
        (src / name).write_text(name)
    dest = tmp_path / "assets" / "pyodide"
    build_book._copy_changed(src, dest, build_book.PYODIDE_FILES)
    assert sorted(p.name for p in dest.iterdir()) == sorted(build_book.PYODIDE_FILES)
    (src / "pyodide.js").write_text("changed")
    build_book._copy_changed(src, dest, build_book.PYODIDE_FILES)
    assert (dest / "pyodide.js").read_text() == "changed"


def test_cjk_subset(tmp_path):
    """The zh pages' Chinese labels come with the glyphs they need, and only those."""
    from fontTools.ttLib import TTFont

    dest = cjk_subset("plt.xlabel('位置 pos')  # 注释", tmp_path / "cjk.otf")
    font = TTFont(dest)
    assert font["name"].getDebugName(1) == "Noto Sans CJK SC"
    cmap = font.getBestCmap()
    assert all(ord(ch) in cmap for ch in "位置注释")
    assert ord("偏") not in cmap
    assert dest.stat().st_size < 20_000
    assert cjk_subset("plt.xlabel('position')", dest) is None and not dest.exists()


def test_run_cell_runs_like_a_notebook():
    """_static/d2l_browser_run.py, which the page runs in Pyodide and the build in CPython."""
    import runpy

    helper = runpy.run_path(str(ROOT / "_static" / "d2l_browser_run.py"))
    run_cell, take_figures = helper["run_cell"], helper["take_figures"]
    ns: dict = {}
    assert run_cell("x = 6\nprint(x * 7)\nx + 1", ns) == ("42\n7\n", "", None)
    assert run_cell("y = x * 2\nNone", ns) == ("", "", None) and ns["y"] == 12
    assert run_cell("import sys\nprint('warn', file=sys.stderr)", ns) == ("", "warn\n", None)
    out, _, error = run_cell("print('before')\ndef f():\n    return 1 / 0\nf()", ns)
    assert out == "before\n"
    assert error.startswith("Traceback (most recent call last):\n  File \"<cell>\", line 4")
    assert error.endswith("ZeroDivisionError: division by zero\n")
    assert "run_cell" not in error and "d2l_browser_run" not in error
    assert run_cell("def broken(:", ns)[2].startswith("  File \"<unknown>\"")
    assert run_cell("import matplotlib.pyplot as plt\nplt.plot([0, 1])\nplt.title('t')", ns)[2] \
        is None
    figures = take_figures()
    assert len(figures) == 1 and base64.b64decode(figures[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert take_figures() == []


def test_strip_cell_leaves_no_doubled_blank_lines():
    source = ("import torch\n\nimport numpy as np\n\nimport d2lmini as d2l\n\nd2l.set_seed(0)\n"
              "x = 1\n\n\ndef f():\n    return x\n")
    code, dropped = strip_cell(source, allowed_modules(), set())
    # the author's two blank lines before a def stay; the gaps of what was taken out do not
    assert code == "import numpy as np\n\nx = 1\n\n\ndef f():\n    return x"
    assert dropped == 3
