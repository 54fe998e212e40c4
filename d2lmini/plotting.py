"""Plotting helpers with d2l's names: line plots, attention heat maps, a live animator; and
labels in the reader's language.

The book has a Chinese and an English edition whose code cells are identical. A plot label is
therefore written in both languages, ``d2l.label("sequence length", "序列长度")``, and the
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

import base64
import html
import io
import json
import os
import re
import warnings
from typing import Any, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch

from .utils import in_notebook

__all__ = ["use_svg_display", "set_figsize", "set_axes", "plot", "show_heatmaps", "Animator",
           "LANG_ENV", "plot_language", "label", "find_cjk_font", "CJKFontError",
           "InteractiveFigure", "interactive"]

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
#: The pip package that brings Noto Sans CJK (requirements.txt, pyproject.toml).
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


def use_svg_display() -> None:
    """Show figures as SVG in Jupyter (sharp at any zoom); a no-op outside IPython.

    With ``$D2LMINI_LANG=zh`` it also puts a CJK font into matplotlib's fonts, so that every
    figure created afterwards can show Chinese labels (text objects keep the fonts they were
    created with).
    """
    if plot_language() == "zh":
        _cjk_font()
    try:
        from matplotlib_inline import backend_inline
    except ImportError:  # pragma: no cover
        return
    backend_inline.set_matplotlib_formats("svg")


def set_figsize(figsize: tuple[float, float] = (3.5, 2.5)) -> None:
    """Set the default figure size (inches) of matplotlib."""
    use_svg_display()
    plt.rcParams["figure.figsize"] = figsize


def set_axes(axes: Any, xlabel: str | None, ylabel: str | None, xlim: Any, ylim: Any,
             xscale: str, yscale: str, legend: Sequence[str] | None) -> None:
    """Set labels, limits, scales, legend and grid of matplotlib ``axes``."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_xscale(xscale)
    axes.set_yscale(yscale)
    axes.set_xlim(xlim)
    axes.set_ylim(ylim)
    if legend:
        axes.legend(legend)
    axes.grid(True)


def _to_numpy(a: Any) -> Any:
    if isinstance(a, torch.Tensor):
        return a.detach().cpu().numpy()
    return a


def plot(X: Any, Y: Any = None, xlabel: str | None = None, ylabel: str | None = None,
         legend: Sequence[str] | None = None, xlim: Any = None, ylim: Any = None,
         xscale: str = "linear", yscale: str = "linear",
         fmts: Sequence[str] = ("-", "m--", "g-.", "r:"),
         figsize: tuple[float, float] = (3.5, 2.5), axes: Any = None) -> Any:
    """Plot one or several curves (d2l's ``plot``).

    ``X`` and ``Y`` are a 1-D sequence/array/tensor or a list of them; with ``Y=None`` the
    values of ``X`` are plotted against their indices. Returns the axes.
    """
    if legend is None:
        legend = []
    set_figsize(figsize)
    axes = axes if axes is not None else plt.gca()

    def has_one_axis(v):  # True if v is a single curve
        v = _to_numpy(v)
        return (hasattr(v, "ndim") and v.ndim == 1
                or isinstance(v, list) and not hasattr(_to_numpy(v[0]), "__len__"))

    if has_one_axis(X):
        X = [X]
    if Y is None:
        X, Y = [[]] * len(X), X
    elif has_one_axis(Y):
        Y = [Y]
    if len(X) != len(Y):
        X = X * len(Y)
    axes.cla()
    for x, y, fmt in zip(X, Y, fmts * (len(Y) // len(fmts) + 1)):
        x, y = _to_numpy(x), _to_numpy(y)
        if len(x):
            axes.plot(x, y, fmt)
        else:
            axes.plot(y, fmt)
    set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend)
    return axes


def _panel_titles(titles: Any, num_rows: int, num_cols: int) -> list[list[str | None]]:
    """One title (or None) per panel: per-column titles go on the top row only."""
    none: list[list[str | None]] = [[None] * num_cols for _ in range(num_rows)]
    if not titles:
        return none
    titles = list(titles)
    if all(isinstance(t, str) for t in titles):
        if len(titles) != num_cols:
            raise ValueError(f"titles must hold {num_cols} column titles or {num_rows} rows of "
                             f"them; got {len(titles)}")
        none[0] = titles
        return none
    if len(titles) != num_rows or any(len(row) != num_cols for row in titles):
        raise ValueError(f"titles must hold {num_cols} column titles or {num_rows} rows of "
                         f"{num_cols}; got {titles!r}")
    return [list(row) for row in titles]


def _has_cjk(labels: Sequence[str] | None) -> bool:
    """Does any label hold a CJK character (which needs a CJK font in either edition)?"""
    return any("\u2e80" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"
               for text in labels or () for ch in str(text))


def _set_ticks(axis: Any, labels: Sequence[str] | None, rotation: float) -> None:
    """One tick per position with its label, or integer positions when there are no labels."""
    if labels is None:
        axis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    else:
        axis.set_ticks(range(len(labels)), list(labels), rotation=rotation)


def show_heatmaps(matrices: Any, xlabel: str, ylabel: str,
                  titles: Sequence[str] | Sequence[Sequence[str]] | None = None,
                  figsize: tuple[float, float] = (2.5, 2.5), cmap: str = "Reds", *,
                  xticklabels: Sequence[str] | None = None,
                  yticklabels: Sequence[str] | None = None) -> Any:
    """Draw a grid of heat maps.

    ``matrices`` has shape ``(num_rows, num_cols, Q, K)`` (tensor or array), e.g. attention
    weights of several layers (rows) and heads (columns). ``titles``: one per column (shown
    above the top row) or one per map (``num_rows`` lists of ``num_cols``, e.g. "layer 2, head
    3"). ``xticklabels`` (K) and ``yticklabels`` (Q) name the keys and queries, e.g. the
    tokens; without them the ticks are integer positions. Returns the figure.
    """
    matrices = np.asarray(_to_numpy(matrices))
    if matrices.ndim != 4:
        raise ValueError(
            "matrices must have shape (num_rows, num_cols, num_queries, num_keys); got "
            f"{matrices.shape}"
        )
    num_rows, num_cols, num_q, num_k = matrices.shape
    for name, ticks, size in (("xticklabels", xticklabels, num_k),
                              ("yticklabels", yticklabels, num_q)):
        if ticks is not None and len(ticks) != size:
            raise ValueError(f"{name} must hold {size} labels; got {len(ticks)}")
    panel_titles = _panel_titles(titles, num_rows, num_cols)
    use_svg_display()
    if _has_cjk(xticklabels) or _has_cjk(yticklabels):  # Chinese tokens, in either edition
        try:
            _cjk_font()
        except CJKFontError as err:
            warnings.warn(f"Chinese tick labels may not render: {err}", stacklevel=2)
    fig = plt.figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(num_rows, num_cols, sharex=True, sharey=True, squeeze=False)
    pcm = None
    for i, (row_axes, row_matrices) in enumerate(zip(axes, matrices)):
        for j, (ax, matrix) in enumerate(zip(row_axes, row_matrices)):
            pcm = ax.imshow(matrix, cmap=cmap)
            _set_ticks(ax.xaxis, xticklabels, rotation=90)
            _set_ticks(ax.yaxis, yticklabels, rotation=0)
            if i == num_rows - 1:
                ax.set_xlabel(xlabel)
            if j == 0:
                ax.set_ylabel(ylabel)
            if panel_titles[i][j]:
                ax.set_title(panel_titles[i][j], fontsize="medium")
    fig.colorbar(pcm, ax=axes, shrink=0.6)
    return fig


class Animator:
    """Draw data incrementally (d2l's ``Animator``): live in a Jupyter notebook, silent
    elsewhere (the figure is kept in ``self.fig``)."""

    def __init__(self, xlabel: str | None = None, ylabel: str | None = None,
                 legend: Sequence[str] | None = None, xlim: Any = None, ylim: Any = None,
                 xscale: str = "linear", yscale: str = "linear",
                 fmts: Sequence[str] = ("-", "m--", "g-.", "r:"), nrows: int = 1,
                 ncols: int = 1, figsize: tuple[float, float] = (3.5, 2.5)) -> None:
        if legend is None:
            legend = []
        use_svg_display()
        self.fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False)
        self.axes = axes.ravel()
        self.config_axes = lambda: set_axes(self.axes[0], xlabel, ylabel, xlim, ylim,
                                            xscale, yscale, legend)
        self.X: list[list[float]] | None = None
        self.Y: list[list[float]] | None = None
        self.fmts = fmts
        self._display = None
        if in_notebook():
            from IPython import display
            self._display = display
        if self._display is not None or matplotlib.get_backend().lower() == "agg":
            plt.close(self.fig)  # we display it ourselves; don't show it twice

    def add(self, x: Any, y: Any) -> None:
        """Add one point per curve: ``x`` a number or list, ``y`` a number or list."""
        if not hasattr(y, "__len__"):
            y = [y]
        n = len(y)
        if not hasattr(x, "__len__"):
            x = [x] * n
        if self.X is None:
            self.X = [[] for _ in range(n)]
        if self.Y is None:
            self.Y = [[] for _ in range(n)]
        for i, (a, b) in enumerate(zip(x, y)):
            if a is not None and b is not None:
                self.X[i].append(float(a))
                self.Y[i].append(float(b))
        self.axes[0].cla()
        for x_i, y_i, fmt in zip(self.X, self.Y, self.fmts):
            self.axes[0].plot(x_i, y_i, fmt)
        self.config_axes()
        if self._display is not None:
            # clear first (lazily: when the new figure arrives), so that the last figure
            # stays in the cell's output together with anything printed afterwards
            self._display.clear_output(wait=True)
            self._display.display(self.fig)


# ---------------------------------------------------------------------------------------------
# Interactive figures: a Vega-Lite chart in the HTML pages, the static figure in print
# ---------------------------------------------------------------------------------------------

#: The media type of a Vega-Lite 6 specification (what Altair 6 writes): the one given to a
#: specification without a ``$schema``.
VEGALITE_MIME = "application/vnd.vegalite.v6+json"


class InteractiveFigure:
    """A figure to explore in the book's pages: a Vega-Lite chart with the static figure that
    stands for it where no chart can run.

    Jupyter shows it through its rich display, in three forms: ``text/html``, a
    ``<div class="d2l-vega">`` holding the chart's specification (``data-spec``) and the static
    figure as an image (the book's pages replace the image by the live chart, offline, with the
    Vega libraries they carry; where no script runs, the image stays); ``image/svg+xml``, the
    static figure, which the PDF prints; and the specification itself (:data:`VEGALITE_MIME`),
    which JupyterLab can draw.

    Attributes:
        spec: the Vega-Lite specification (a JSON-serialisable dict).
        svg: the static figure, as SVG text.
    """

    def __init__(self, spec: dict, svg: str) -> None:
        self.spec, self.svg = spec, svg

    def to_html(self) -> str:
        """The ``text/html`` form: the chart's specification and the static figure as an image
        whose ``alt`` the book's build fills from the cell's alt text."""
        data = json.dumps(self.spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        image = base64.b64encode(self.svg.encode("utf-8")).decode("ascii")
        return (f'<div class="d2l-vega" data-spec="{html.escape(data, quote=True)}">'
                f'<img class="d2l-vega-static" alt="" src="data:image/svg+xml;base64,{image}">'
                "</div>")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # the media type names the major version of the schema (Altair 5 writes v5, Altair 6 v6)
        major = re.search(r"/v(\d+)[.\w-]*\.json$", str(self.spec.get("$schema", "")))
        mime = f"application/vnd.vegalite.v{major.group(1)}+json" if major else VEGALITE_MIME
        return {"text/html": self.to_html(), "image/svg+xml": self.svg, mime: self.spec,
                "text/plain": repr(self)}

    def __repr__(self) -> str:
        return f"<InteractiveFigure: {self.spec.get('description') or 'Vega-Lite chart'}>"


def interactive(chart: Any, figure: matplotlib.figure.Figure) -> InteractiveFigure:
    """An interactive figure from a Vega-Lite ``chart`` and the static matplotlib ``figure``
    that stands for it in print (the same data, a representative setting of the controls).

    ``chart`` is an Altair chart (anything with ``to_dict()``) or a Vega-Lite specification as a
    dict. The figure is drawn to SVG and closed, so that Jupyter does not show it a second time.

    Raises:
        TypeError: ``chart`` is neither, or ``figure`` is not a matplotlib figure.
    """
    if isinstance(chart, dict):
        spec = chart
    elif callable(getattr(chart, "to_dict", None)):
        spec = chart.to_dict()
    else:
        raise TypeError("chart must be an Altair chart or a Vega-Lite specification (dict); got "
                        f"{type(chart).__name__}")
    if not isinstance(figure, matplotlib.figure.Figure):
        raise TypeError(f"figure must be a matplotlib Figure; got {type(figure).__name__}")
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "d2lmini"}):  # the same SVG on every run
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    return InteractiveFigure(spec, buffer.getvalue())
