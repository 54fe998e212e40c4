"""What a Chinese reader sees is Chinese: every reader-visible string of the built zh edition —
page text with its glued values, the data loaders' announcements, alt texts, the axis labels and
text of the figures, and the theme's chrome — is Chinese, or English that belongs there (code,
math, identifiers, names, citations, example sentences, the glossary's English terms; the
allowances are in ``built_book.zh_reader_problems``).

The checks read the nothing-at-all build (``built_book.build``); the published build, with the
real data, is held to the same in ``test_published_build.py``. The checker itself is tested on
small strings below, so that it can be seen to fail.
"""
from __future__ import annotations

import pytest
from built_book import HTML, build, english_runs, svg_axis_labels, zh_reader_problems

from tools.build.book_sphinx.i18n import CHROME_ZH, localise_chrome

KINDS = ("text", "announcements", "alt", "chrome", "plots")


@pytest.fixture(scope="module")
def problems():
    build()
    return zh_reader_problems(HTML / "zh")


@pytest.mark.book
@pytest.mark.parametrize("kind", KINDS)
def test_zh_edition_shows_chinese(problems, kind):
    found = problems[kind]
    assert not found, f"English {kind} on zh pages:\n" + "\n".join(found)


def test_english_runs_finds_english_and_spares_what_belongs():
    assert english_runs("本次构建使用的是：offline corpus shipped with d2lmini 0.1.0。") == [
        "offline corpus shipped with"]
    assert english_runs("训练 0.2 秒，download failed") == ["download failed"]
    allowed = ("暂退法（dropout）与位置前馈网络（position-wise feed-forward network），"
               "论文 “Attention Is All You Need”，Hugging Face 的库，`d2l.train_seq2seq` 与 "
               "num_steps、GPT-2、BLEU GPU，签名 nrefs:1|case:mixed，Tiny Shakespeare。")
    assert english_runs(allowed) == []


def test_axis_labels_of_a_matplotlib_svg():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg"><g id="axes_1">'
           '<g id="matplotlib.axis_1"><g id="xtick_1"><g id="text_1"><!-- 50 --></g></g>'
           '<g id="text_2"><!-- epoch --></g></g>'
           '<g id="matplotlib.axis_2"><g id="text_3"><!-- 每词元损失 --></g></g>'
           '<g id="text_4"><!-- je suis --></g></g></svg>')
    assert svg_axis_labels(svg) == ["epoch", "每词元损失"]


def test_localise_chrome_translates_the_theme_and_nothing_else():
    page = ('<button title="Toggle primary sidebar"></button>'
            '<span class="btn__text-container">Repository</span>'
            '<button title="列印成 PDF"></button><img alt="Colab logo">'
            '<a class="headerlink" title="Link to this heading">#</a>'
            '<p>Repository and Main stay as written in the text.</p>'
            '<th class="head"><p>Run Time (s)</p></th><td><p>cache</p></td>'
            '<p class="copyright">© Copyright 2026.</p>')
    out = localise_chrome(page)
    for english in ("Toggle primary sidebar", ">Repository<", "列印成", "Colab logo",
                    "Link to this heading", "Run Time", "<p>cache</p>", "Copyright"):
        assert english not in out, english
    assert "<p>Repository and Main stay as written in the text.</p>" in out
    assert "打印为 PDF" in out and "运行时间（秒）" in out and "© 2026 版权所有。" in out
    assert all(any(ch >= "\u3400" for ch in zh) for zh in CHROME_ZH.values())
