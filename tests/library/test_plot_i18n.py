"""d2lmini.plotting: plot labels in the edition's language (``D2LMINI_LANG``) with a CJK font."""

import sys
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib import font_manager

import d2lmini as d2l
from d2lmini import book

plot_module = sys.modules["d2lmini.book.language"]  # the font state lives there

# what the library itself finds (matplotlib's fonts, the bundled Noto Sans CJK, font files
# newer than matplotlib's cache), not only matplotlib's possibly stale font list
HAVE_CJK = book.find_cjk_font() is not None
NO_CJK = "no CJK font (pip install noto-cjk-sans-otc, or apt install fonts-noto-cjk)"


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    """Each test starts without a chosen CJK font and with matplotlib's default fonts."""
    monkeypatch.setattr(plot_module, "_cjk_state", {})
    with matplotlib.rc_context(), warnings.catch_warnings():  # filters restored afterwards
        yield


def test_english_by_default(monkeypatch):
    monkeypatch.delenv(book.LANG_ENV, raising=False)
    assert book.plot_language() == "en"
    assert book.label("key", "键") == "key"
    assert book.label(["a", "b"], ["甲", "乙"]) == ["a", "b"]


@pytest.mark.parametrize("value, lang", [("zh", "zh"), ("zh_CN", "zh"), ("EN", "en"), ("", "en")])
def test_language_from_the_environment(monkeypatch, value, lang):
    monkeypatch.setenv(book.LANG_ENV, value)
    assert book.plot_language() == lang


def test_unknown_language_is_an_error(monkeypatch):
    monkeypatch.setenv(book.LANG_ENV, "fr")
    with pytest.raises(ValueError, match="D2LMINI_LANG"):
        book.plot_language()


def test_bad_arguments(monkeypatch):
    monkeypatch.setenv(book.LANG_ENV, "en")
    with pytest.raises(TypeError, match="two strings"):
        book.label("a", ["甲"])
    with pytest.raises(ValueError, match="same length"):
        book.label(["a", "b"], ["甲"])


@pytest.mark.skipif(not HAVE_CJK, reason=NO_CJK)
def test_chinese_labels_render_with_a_cjk_font(monkeypatch):
    monkeypatch.setenv(book.LANG_ENV, "zh")
    text = book.label("sequence length n", "序列长度 n")
    assert text == "序列长度 n"
    assert plt.rcParams["font.family"][-1] in plot_module.CJK_FONTS
    fig, ax = plt.subplots()
    ax.set_xlabel(text)
    ax.set_title(book.label("attention weights", "注意力权重"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" would be an error
        fig.canvas.draw()
    plt.close(fig)


def _no_cjk_font_anywhere(monkeypatch):
    monkeypatch.setattr(plot_module, "CJK_FONTS", ("No Such Font SC",))
    monkeypatch.setattr(plot_module, "_bundled_cjk_font_file", lambda: None)
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])


def test_no_cjk_font_is_an_error_in_zh_not_english_labels(monkeypatch):
    """A zh build must not publish English labels or a font warning: it stops instead."""
    monkeypatch.setenv(book.LANG_ENV, "zh")
    _no_cjk_font_anywhere(monkeypatch)
    family = list(plt.rcParams["font.family"])
    assert book.find_cjk_font() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an error, and no warning before it
        with pytest.raises(book.CJKFontError, match="pip install noto-cjk-sans-otc"):
            book.label("key", "键")
        with pytest.raises(book.CJKFontError):
            d2l.use_svg_display()
    assert plt.rcParams["font.family"] == family
    monkeypatch.setenv(book.LANG_ENV, "en")  # the English edition needs no CJK font
    assert book.label("key", "键") == "key"


def test_the_bundled_font_package_is_found_without_system_fonts(monkeypatch):
    """The pip font (requirements.txt) is enough: no system CJK font, a stale font list."""
    bundled = plot_module._bundled_cjk_font_file()
    if bundled is None:
        pytest.skip("noto-cjk-sans-otc is not installed (it is in requirements.txt)")
    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist",
                        [f for f in manager.ttflist if f.name not in plot_module.CJK_FONTS])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    assert book.find_cjk_font() in plot_module.CJK_FONTS
    assert any(f.fname == bundled for f in manager.ttflist)


def test_a_cached_font_whose_file_is_gone_is_not_used(monkeypatch, tmp_path):
    """matplotlib's font cache can outlive an uninstalled font (apt purge): the entry is skipped
    and the bundled font is used instead of drawing boxes."""
    bundled = plot_module._bundled_cjk_font_file()
    if bundled is None:
        pytest.skip("noto-cjk-sans-otc is not installed (it is in requirements.txt)")
    manager = font_manager.fontManager
    gone = font_manager.FontEntry(fname=str(tmp_path / "NotoSansCJK-Regular.ttc"),
                                  name=plot_module.CJK_FONTS[0])
    monkeypatch.setattr(manager, "ttflist",
                        [f for f in manager.ttflist if f.name not in plot_module.CJK_FONTS]
                        + [gone])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: [])
    assert plot_module._installed_cjk_font() is None
    assert book.find_cjk_font() in plot_module.CJK_FONTS
    assert any(f.fname == bundled for f in manager.ttflist)


def test_the_book_requirements_bring_a_cjk_font():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert plot_module.CJK_FONT_PACKAGE in (root / "pyproject.toml").read_text()  # a dependency


@pytest.mark.skipif(not HAVE_CJK, reason=NO_CJK)
def test_cjk_font_installed_after_the_font_cache_is_found(monkeypatch):
    """A font installed while the kernel runs (apt in Colab) is not in matplotlib's cache yet."""
    monkeypatch.setenv(book.LANG_ENV, "zh")
    manager = font_manager.fontManager
    cjk_files = sorted({f.fname for f in manager.ttflist if f.name in plot_module.CJK_FONTS})
    monkeypatch.setattr(manager, "ttflist",
                        [f for f in manager.ttflist if f.name not in plot_module.CJK_FONTS])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: cjk_files)
    assert book.label("key", "键") == "键"
    assert plt.rcParams["font.family"][-1] in plot_module.CJK_FONTS


@pytest.mark.skipif(not HAVE_CJK, reason=NO_CJK)
def test_axes_created_before_the_first_label_show_chinese(monkeypatch):
    """The chapters call use_svg_display() first; axes made before any book.label() call must
    still render Chinese (a text object keeps the fonts it was created with)."""
    monkeypatch.setenv(book.LANG_ENV, "zh")
    d2l.use_svg_display()
    fig, ax = plt.subplots()
    ax.set_xlabel(book.label("probability", "概率"))
    ax.legend(handles=ax.plot([0, 1], label=book.label("smoothed", "平滑")))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()
    plt.close(fig)


@pytest.mark.skipif(not HAVE_CJK, reason=NO_CJK)
def test_a_character_no_font_has_is_an_error_in_zh(monkeypatch):
    """A box with a "Glyph ... missing" warning in a zh page would be published: it stops."""
    monkeypatch.setenv(book.LANG_ENV, "zh")
    d2l.use_svg_display()
    fig, ax = plt.subplots()
    ax.set_xlabel(book.label("sequence length", "序列长度"))
    fig.canvas.draw()  # Chinese is found in the CJK font: no warning, no error
    ax.set_title("\u0f00")  # Tibetan: in neither DejaVu Sans nor Noto Sans CJK
    with pytest.raises(UserWarning, match="missing from font"):
        fig.canvas.draw()
    plt.close(fig)



@pytest.mark.parametrize("lang, xlabel, ylabel", [
    ("en", "epoch", "loss per token"),
    pytest.param("zh", "轮次", "每词元损失", marks=pytest.mark.skipif(not HAVE_CJK, reason=NO_CJK)),
])
def test_live_training_plot_speaks_the_edition_language(monkeypatch, lang, xlabel, ylabel):
    """train_seq2seq's live loss curve (the one plot of chapter 6's training cell) is labelled in
    the edition's language, like every other figure of the book."""
    from d2lmini.train import _Progress

    monkeypatch.setenv(book.LANG_ENV, lang)
    progress = _Progress(4, animate=True, progress=False)
    for epoch, loss in enumerate([3.0, 2.0, 1.5, 1.2]):
        progress.epoch_done(epoch, loss)
    ax = progress.animator.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_yscale()) == (xlabel, ylabel, "log")
    plt.close(progress.animator.fig)


@pytest.mark.parametrize("n, zh, en", [
    (63_083_104, "6308 万", "63.1 million"),
    (213_831_680, "2.14 亿", "213.8 million"),
    (18_944_000, "1894 万", "18.9 million"),
    (37_000, "3.7 万", "37,000"),
    (9_500, "9,500", "9,500"),
    (2_140_000_000, "21.40 亿", "2.14 billion"),
])
def test_magnitude_in_each_edition(monkeypatch, n, zh, en):
    """Counts in prose: 万/亿 in the zh edition (one convention, zh review M6), millions in en."""
    assert book.magnitude(n, "zh") == zh and book.magnitude(n, "en") == en
    monkeypatch.setenv(book.LANG_ENV, "zh")
    assert book.magnitude(n) == zh


def test_magnitude_rejects_what_is_not_a_count():
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="count"):
            book.magnitude(bad, "zh")
    with pytest.raises(ValueError, match="'zh' or 'en'"):
        book.magnitude(10, "fr")
