"""Plotting helpers with d2l's names: line plots, attention heat maps, a live animator.

Labels in the reader's language and the font for Chinese ones are the book's
(:mod:`d2lmini.book.language`); the helpers here use that font when a label is Chinese.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch

from .book.language import CJKFontError, _cjk_font, plot_language
from .utils import in_notebook

__all__ = ["use_svg_display", "set_figsize", "set_axes", "plot", "show_heatmaps", "Animator"]


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
    if xscale == "log":
        _readable_log_ticks(axes.xaxis, axes.get_xlim())
    if yscale == "log":
        _readable_log_ticks(axes.yaxis, axes.get_ylim())
    if legend:
        axes.legend(legend)
    axes.grid(True)


def _readable_log_ticks(axis: Any, limits: tuple[float, float]) -> None:
    """Ticks of a log axis that spans less than two powers of ten, labelled in plain numbers.

    On such an axis matplotlib labels the minor ticks as well (2×10², 3×10², 4×10², ...), and
    the labels run into each other. Here the labelled ticks are 1, 2 and 5 times a power of
    ten (every integer multiple when the axis spans less than a factor 4), written as plain
    numbers (128 to 1024: 200, 500, 1000); the minor ticks stay unlabelled. Wider axes keep
    matplotlib's labels at the powers of ten.
    """
    from matplotlib import ticker

    lo, hi = sorted(limits)
    if lo <= 0 or hi / lo >= 100:
        return
    subs = (1.0, 2.0, 5.0) if hi / lo >= 4 else tuple(float(k) for k in range(1, 10))
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())


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
