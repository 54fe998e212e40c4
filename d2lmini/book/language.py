"""The reader's language in figures: ``label(en, zh)`` picks the edition's string, and Chinese
labels get a font with Chinese glyphs.

The book has a Chinese and an English edition whose code cells are identical. A plot label is
therefore written in both languages, ``book.label("sequence length", "序列长度")``, and the
environment variable ``D2LMINI_LANG`` (``zh`` or ``en``, default ``en``), which the book build
and the exported notebooks set, picks one. Chinese labels need a font with Chinese glyphs: the
first call that returns a Chinese label puts such a font after matplotlib's default in the font
fallback list. The font comes with the package's requirements (``noto-cjk-sans-otc``, Noto Sans
CJK from PyPI, SIL Open Font License), so every machine draws the same Chinese labels without a
system font; an installed system font (Noto Sans CJK, Source Han Sans, …) is used when that
package is missing. With ``D2LMINI_LANG=zh`` and no such font at all, a Chinese label raises
:class:`CJKFontError` instead of silently drawing English labels, and once the CJK font is set
up, a character that no font has (matplotlib's "Glyph ... missing" warning, a box in the plot)
is an error too.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Sequence

import matplotlib.pyplot as plt

__all__ = ["LANG_ENV", "plot_language", "label", "magnitude", "find_cjk_font", "CJKFontError"]

#: The environment variable that names the edition's language: ``zh`` or ``en``.
LANG_ENV = "D2LMINI_LANG"
_LANGS = ("en", "zh")
#: Fonts with Chinese glyphs, most preferred first (Linux, macOS, Windows).
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
             "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "PingFang SC", "Heiti SC",
             "Hiragino Sans GB", "Microsoft YaHei", "SimHei", "Noto Sans CJK JP",
             "Noto Sans CJK TC")
#: Substrings of the file names of such fonts, to find one installed after matplotlib's cache.
_CJK_FILE_HINTS = ("notosanscjk", "sourcehansans", "wqy", "wenquanyi", "simhei", "msyh", "pingfang")
#: The pip package that brings Noto Sans CJK (a dependency in pyproject.toml).
CJK_FONT_PACKAGE = "noto-cjk-sans-otc"
_cjk_state: dict[str, Any] = {}  # "font": the CJK font put into matplotlib's fallback list


class CJKFontError(RuntimeError):
    """``D2LMINI_LANG=zh`` but no font with Chinese characters can be found: a Chinese plot
    would show English labels (or boxes), so it stops instead."""


def plot_language() -> str:
    """The language of plot labels, ``"zh"`` or ``"en"``, from ``$D2LMINI_LANG`` (default en)."""
    value = os.environ.get(LANG_ENV, "en").strip().lower() or "en"
    if value.startswith("zh"):  # zh, zh-CN, zh_CN
        return "zh"
    if value.startswith("en"):
        return "en"
    raise ValueError(f"{LANG_ENV} must be 'zh' or 'en'; got {value!r}")


def _bundled_cjk_font_file() -> str | None:
    """The font file of the ``noto-cjk-sans-otc`` package (Noto Sans CJK), if installed."""
    try:
        import noto_cjk_sans_otc
    except ImportError:
        return None
    path = str(noto_cjk_sans_otc.FONT_PATH)
    return path if os.path.isfile(path) else None


def _installed_cjk_font() -> str | None:
    """The most preferred of :data:`CJK_FONTS` that matplotlib knows, or None. A font whose
    file is gone (matplotlib's font cache outlives an uninstalled font) does not count."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist if os.path.isfile(f.fname)}
    return next((name for name in CJK_FONTS if name in installed), None)


def find_cjk_font() -> str | None:
    """The name of a font with Chinese glyphs that matplotlib can use, or None.

    Looks, in this order, at the fonts matplotlib already knows, the bundled Noto Sans CJK of
    the ``noto-cjk-sans-otc`` package, and font files installed after matplotlib built its font
    cache (``findSystemFonts``, e.g. apt in a running Colab kernel); a font found in a file is
    registered with matplotlib (``fontManager.addfont``). Changes no rcParams.
    """
    from matplotlib import font_manager

    font = _installed_cjk_font()
    if font is not None:
        return font
    candidates = [_bundled_cjk_font_file()] + [
        path for path in font_manager.findSystemFonts()
        if any(k in os.path.basename(path).lower() for k in _CJK_FILE_HINTS)]
    for path in filter(None, candidates):
        try:
            font_manager.fontManager.addfont(path)
        except (OSError, RuntimeError, ValueError):
            continue
        font = _installed_cjk_font()
        if font is not None:
            return font
    return None


def _cjk_font() -> str:
    """Make matplotlib fall back to a CJK font; return its name. Raises :class:`CJKFontError`
    when there is none (the zh edition must not publish English labels)."""
    if "font" not in _cjk_state:
        font = find_cjk_font()
        if font is None:
            raise CJKFontError(
                f"{LANG_ENV}=zh but no font with Chinese characters is installed (looked for "
                f"{', '.join(CJK_FONTS[:3])}, ...), so plot labels cannot be Chinese. Install "
                f"the font package (pip install {CJK_FONT_PACKAGE}, part of the book's "
                "requirements) or a system font (Debian/Ubuntu: apt install fonts-noto-cjk), "
                "then restart the kernel.")
        # matplotlib falls back glyph by glyph along font.family: Latin letters, digits and
        # math symbols come from the default font, Chinese characters from the CJK font
        family = [n for n in plt.rcParams["font.family"] if n != font]
        plt.rcParams["font.family"] = family + [font]
        # a character no font has would be drawn as a box with a warning in the page: an error
        warnings.filterwarnings("error", message=r"Glyph \d+ .*missing from", category=UserWarning)
        _cjk_state["font"] = font
    return _cjk_state["font"]


def label(en: str | Sequence[str], zh: str | Sequence[str]) -> Any:
    """A plot label (or a list of labels) in the language of the edition.

    ``en`` and ``zh`` are the same text in English and in Chinese (two strings, or two lists of
    the same length for a legend). Returns ``zh`` when ``$D2LMINI_LANG`` is ``zh`` (after adding
    a CJK font to matplotlib's fonts; :class:`CJKFontError` when there is none), otherwise ``en``.
    """
    both_str = isinstance(en, str) and isinstance(zh, str)
    both_seq = (not isinstance(en, str) and not isinstance(zh, str)
                and isinstance(en, Sequence) and isinstance(zh, Sequence))
    if not (both_str or both_seq):
        raise TypeError("label(en, zh) takes two strings or two lists of strings; got "
                        f"{type(en).__name__} and {type(zh).__name__}")
    if both_seq and len(en) != len(zh):
        raise ValueError(f"en and zh must have the same length; got {len(en)} and {len(zh)}")
    if plot_language() == "zh":
        _cjk_font()
        return zh if both_str else list(zh)
    return en if both_str else list(en)


def magnitude(n: float, lang: str | None = None) -> str:
    """A large count as the edition writes it in prose: Chinese counts in 万 (10,000) and 亿
    (100 million), English in millions and billions.

    ``lang`` is ``'zh'`` or ``'en'`` (default: the edition's, ``$D2LMINI_LANG``). Chinese:
    ``'2.14 亿'`` from 1e8 on, ``'6308 万'`` from 1e6, ``'3.7 万'`` from 1e4; English:
    ``'2.14 billion'`` from 1e9, ``'63.1 million'`` from 1e6; a smaller count is written
    out, ``'9,500'``. A chapter glues the string (``glue(name, book.magnitude(n))``) and each
    edition's sentence places it, so neither edition borrows the other's units.
    """
    lang = plot_language() if lang is None else lang
    if lang not in _LANGS:
        raise ValueError(f"lang must be 'zh' or 'en'; got {lang!r}")
    n = float(n)
    if not n >= 0 or n == float("inf"):
        raise ValueError(f"magnitude needs a finite count >= 0; got {n!r}")
    if lang == "zh":
        if n >= 1e8:
            return f"{n / 1e8:.2f} 亿"
        if n >= 1e6:
            return f"{n / 1e4:.0f} 万"
        if n >= 1e4:
            return f"{n / 1e4:.1f} 万"
    else:
        if n >= 1e9:
            return f"{n / 1e9:.2f} billion"
        if n >= 1e6:
            return f"{n / 1e6:.1f} million"
    return f"{n:,.0f}"
