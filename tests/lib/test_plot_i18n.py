"""d2lmini.plotting: plot labels in the edition's language (``D2LMINI_LANG``) with a CJK font."""

import sys
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402

import d2lmini as d2l  # noqa: E402

plot_module = sys.modules["d2lmini.plotting"]

HAVE_CJK = any(f.name in plot_module.CJK_FONTS for f in font_manager.fontManager.ttflist)


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch):
    """Each test starts without a chosen CJK font and with matplotlib's default fonts."""
    monkeypatch.setattr(plot_module, "_cjk_state", {})
    with matplotlib.rc_context():
        yield


def test_english_by_default(monkeypatch):
    monkeypatch.delenv(d2l.LANG_ENV, raising=False)
    assert d2l.plot_language() == "en"
    assert d2l.label("key", "键") == "key"
    assert d2l.label(["a", "b"], ["甲", "乙"]) == ["a", "b"]


@pytest.mark.parametrize("value, lang", [("zh", "zh"), ("zh_CN", "zh"), ("EN", "en"), ("", "en")])
def test_language_from_the_environment(monkeypatch, value, lang):
    monkeypatch.setenv(d2l.LANG_ENV, value)
    assert d2l.plot_language() == lang


def test_unknown_language_is_an_error(monkeypatch):
    monkeypatch.setenv(d2l.LANG_ENV, "fr")
    with pytest.raises(ValueError, match="D2LMINI_LANG"):
        d2l.plot_language()


def test_bad_arguments(monkeypatch):
    monkeypatch.setenv(d2l.LANG_ENV, "en")
    with pytest.raises(TypeError, match="two strings"):
        d2l.label("a", ["甲"])
    with pytest.raises(ValueError, match="same length"):
        d2l.label(["a", "b"], ["甲"])


@pytest.mark.skipif(not HAVE_CJK, reason="no CJK font installed (apt install fonts-noto-cjk)")
def test_chinese_labels_render_with_a_cjk_font(monkeypatch):
    monkeypatch.setenv(d2l.LANG_ENV, "zh")
    text = d2l.label("sequence length n", "序列长度 n")
    assert text == "序列长度 n"
    assert plt.rcParams["font.family"][-1] in plot_module.CJK_FONTS
    fig, ax = plt.subplots()
    ax.set_xlabel(text)
    ax.set_title(d2l.label("attention weights", "注意力权重"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" would be an error
        fig.canvas.draw()
    plt.close(fig)


def test_no_cjk_font_english_labels_and_one_warning(monkeypatch):
    monkeypatch.setenv(d2l.LANG_ENV, "zh")
    monkeypatch.setattr(plot_module, "CJK_FONTS", ("No Such Font SC",))
    family = list(plt.rcParams["font.family"])
    with pytest.warns(UserWarning, match="no font with Chinese characters") as record:
        first = d2l.label("key", "键")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second label does not warn again
        second = d2l.label(["a"], ["甲"])
    assert (first, second, len(record)) == ("key", ["a"], 1)
    assert plt.rcParams["font.family"] == family


@pytest.mark.skipif(not HAVE_CJK, reason="no CJK font installed (apt install fonts-noto-cjk)")
def test_cjk_font_installed_after_the_font_cache_is_found(monkeypatch):
    """A font installed while the kernel runs (apt in Colab) is not in matplotlib's cache yet."""
    monkeypatch.setenv(d2l.LANG_ENV, "zh")
    manager = font_manager.fontManager
    cjk_files = sorted({f.fname for f in manager.ttflist if f.name in plot_module.CJK_FONTS})
    monkeypatch.setattr(manager, "ttflist",
                        [f for f in manager.ttflist if f.name not in plot_module.CJK_FONTS])
    monkeypatch.setattr(font_manager, "findSystemFonts", lambda *a, **k: cjk_files)
    assert d2l.label("key", "键") == "键"
    assert plt.rcParams["font.family"][-1] in plot_module.CJK_FONTS


@pytest.mark.skipif(not HAVE_CJK, reason="no CJK font installed (apt install fonts-noto-cjk)")
def test_axes_created_before_the_first_label_show_chinese(monkeypatch):
    """The chapters call use_svg_display() first; axes made before any d2l.label() call must
    still render Chinese (a text object keeps the fonts it was created with)."""
    monkeypatch.setenv(d2l.LANG_ENV, "zh")
    d2l.use_svg_display()
    fig, ax = plt.subplots()
    ax.set_xlabel(d2l.label("probability", "概率"))
    ax.legend(handles=ax.plot([0, 1], label=d2l.label("smoothed", "平滑")))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.canvas.draw()
    plt.close(fig)
