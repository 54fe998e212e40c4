"""Tests of d2lmini.utils and d2lmini.plotting."""

import random
import time

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch

import d2lmini as d2l
from d2lmini import book


def test_timer():
    timer = d2l.Timer()
    time.sleep(0.01)
    first = timer.stop()
    timer.start()
    second = timer.stop()
    assert first >= 0.009 and second >= 0
    assert timer.sum() == pytest.approx(first + second)
    assert timer.avg() == pytest.approx((first + second) / 2)
    assert timer.cumsum()[-1] == pytest.approx(timer.sum())


def test_try_gpu_returns_an_available_device():
    device = d2l.try_gpu()
    torch.zeros(1, device=device)  # usable
    if torch.cuda.is_available():
        assert device == torch.device("cuda:0")
    else:
        assert device.type in ("cpu", "mps")


def test_try_gpu_picks_cuda_i_then_mps_then_cpu(monkeypatch):
    """Each branch, whatever this machine has: two fake GPUs, then none, with and without
    Apple's mps."""
    class _Mps:
        available = False

        @staticmethod
        def is_available():
            return _Mps.available
    monkeypatch.setattr(torch.backends, "mps", _Mps, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert d2l.try_gpu() == torch.device("cuda:0")
    assert d2l.try_gpu(1) == torch.device("cuda:1")
    assert d2l.try_gpu(2) == torch.device("cpu")  # no third GPU
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    assert d2l.try_gpu() == torch.device("cpu")
    _Mps.available = True
    assert d2l.try_gpu() == torch.device("mps")
    with pytest.raises(ValueError, match="i must be a non-negative int; got -1"):
        d2l.try_gpu(-1)


def test_set_seed_makes_runs_repeatable():
    def draw():
        return random.random(), np.random.rand(), torch.rand(3)
    d2l.set_seed(123)
    a = draw()
    d2l.set_seed(123)
    b = draw()
    assert a[0] == b[0] and a[1] == b[1] and torch.equal(a[2], b[2])


def test_plot_draws_curves():
    ax = d2l.plot(np.arange(5), [np.arange(5) ** 2, np.arange(5)], "x", "y",
                  legend=["sq", "id"])
    assert len(ax.lines) == 2 and ax.get_xlabel() == "x"
    ax = d2l.plot(torch.arange(4.0))  # a single tensor, plotted against its index
    assert len(ax.lines) == 1


def test_show_heatmaps_grid():
    fig = d2l.show_heatmaps(torch.rand(2, 3, 4, 5), "keys", "queries",
                            titles=["a", "b", "c"])
    assert len(fig.axes) == 2 * 3 + 1  # six maps and a colour bar


def test_show_heatmaps_titles_each_map_and_labels_the_tokens():
    titles = [[f"layer {i + 1}, head {j + 1}" for j in range(3)] for i in range(2)]
    fig = d2l.show_heatmaps(torch.rand(2, 3, 4, 5), "keys", "queries", titles=titles,
                            xticklabels=list("abcde"), yticklabels=["w", "x", "y", "z"])
    maps = fig.axes[:6]
    assert [ax.get_title() for ax in maps] == [t for row in titles for t in row]
    assert [t.get_text() for t in maps[3].get_xticklabels()] == list("abcde")
    assert [t.get_text() for t in maps[0].get_yticklabels()] == ["w", "x", "y", "z"]


def test_show_heatmaps_column_titles_only_on_the_top_row_and_integer_ticks():
    fig = d2l.show_heatmaps(torch.rand(2, 2, 6, 6), "keys", "queries", titles=["a", "b"])
    assert [ax.get_title() for ax in fig.axes[:4]] == ["a", "b", "", ""]
    fig.canvas.draw()
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) and all(float(t).is_integer() for t in ticks)  # no 2.5 positions


@pytest.mark.parametrize("kwargs, match", [
    (dict(titles=["a"]), "titles"), (dict(titles=[["a", "b"]]), "titles"),
    (dict(xticklabels=["a"]), "xticklabels"), (dict(yticklabels=list("abcdef")), "yticklabels")])
def test_show_heatmaps_rejects_labels_of_the_wrong_length(kwargs, match):
    with pytest.raises(ValueError, match=match):
        d2l.show_heatmaps(torch.rand(2, 2, 3, 4), "keys", "queries", **kwargs)


def test_animator_collects_points():
    anim = d2l.Animator(xlabel="epoch", legend=["loss"])
    for i in range(3):
        anim.add(i, i * 0.5)
    assert anim.X == [[0.0, 1.0, 2.0]] and anim.Y[0][-1] == 1.0


def test_use_svg_display_and_set_figsize(monkeypatch):
    from matplotlib_inline import backend_inline
    formats = []
    monkeypatch.setattr(backend_inline, "set_matplotlib_formats",
                        lambda *fmts, **kw: formats.extend(fmts))
    d2l.set_figsize((2, 1))  # calls use_svg_display
    import matplotlib.pyplot as plt
    assert tuple(plt.rcParams["figure.figsize"]) == (2, 1)
    assert formats == ["svg"]  # Jupyter is asked for SVG figures


def test_argument_checks_raise_type_and_value_errors():
    assert d2l.utils.check_positive_int(3, "n") == 3
    with pytest.raises(TypeError, match="n must be a positive int; got float 2.0"):
        d2l.utils.check_positive_int(2.0, "n")
    with pytest.raises(TypeError, match="n must be a positive int; got bool True"):
        d2l.utils.check_positive_int(True, "n")
    with pytest.raises(ValueError, match="n must be a positive int; got 0"):
        d2l.utils.check_positive_int(0, "n")
    assert d2l.utils.check_non_negative_int(0, "seed") == 0
    with pytest.raises(ValueError, match="seed must be a non-negative int; got -1"):
        d2l.set_seed(-1)


def test_check_bool_accepts_only_true_and_false():
    import numpy as np

    assert d2l.utils.check_bool(True, "amp") is True and d2l.utils.check_bool(False, "amp") is False
    for bad, shown in [(1, "int 1"), (0, "int 0"), (None, "NoneType None"), ("yes", "str 'yes'")]:
        with pytest.raises(TypeError, match=rf"^amp must be a bool; got {shown}$"):
            d2l.utils.check_bool(bad, "amp")
    with pytest.raises(TypeError, match="^amp must be a bool; got "):
        d2l.utils.check_bool(np.bool_(True), "amp")  # NumPy's bool is not Python's
    with pytest.raises(TypeError, match=r"^amp must be a bool; got int 1$"):
        d2l.TrainConfig(amp=1)
    with pytest.raises(TypeError, match=r"^bias must be a bool; got str 'no'$"):
        d2l.TransformerConfig(bias="no")


def test_check_int_names_the_argument_and_the_range():
    assert d2l.utils.check_int(-3, "k") == -3
    assert d2l.utils.check_int(4, "k", minimum=1, maximum=4) == 4
    with pytest.raises(TypeError, match=r"^k must be an int; got bool False$"):
        d2l.utils.check_int(False, "k")
    with pytest.raises(TypeError, match=r"^k must be an int >= 2; got float 3.0$"):
        d2l.utils.check_int(3.0, "k", minimum=2)
    with pytest.raises(TypeError, match=r"^k must be a positive int; got str '3'$"):
        d2l.utils.check_int("3", "k", minimum=1)
    with pytest.raises(ValueError, match=r"^k must be an int in \[1, 4\]; got 5$"):
        d2l.utils.check_int(5, "k", minimum=1, maximum=4)
    with pytest.raises(ValueError, match=r"^k must be an int >= 2; got 1$"):
        d2l.utils.check_int(1, "k", minimum=2)


def test_check_number_names_the_argument_and_the_range():
    assert d2l.utils.check_number(0.5, "p", minimum=0, below=1) == 0.5
    assert d2l.utils.check_number(3, "lr", above=0) == 3  # an int is a number
    assert d2l.utils.check_number(-1e9, "x") == -1e9  # no bounds
    with pytest.raises(TypeError, match=r"^lr must be a number > 0; got str '0.1'$"):
        d2l.utils.check_number("0.1", "lr", above=0)
    with pytest.raises(TypeError, match=r"^lr must be a number > 0; got bool True$"):
        d2l.utils.check_number(True, "lr", above=0)
    with pytest.raises(TypeError, match="got NoneType None"):
        d2l.utils.check_number(None, "lr")
    with pytest.raises(ValueError, match=r"^timeout must be a number > 0; got 0$"):
        d2l.utils.check_number(0, "timeout", above=0)
    with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\); got 1$"):
        d2l.utils.check_number(1, "p", minimum=0, below=1)
    with pytest.raises(ValueError, match=r"^p must be a number in \(0, 1\]; got 0.0$"):
        d2l.utils.check_number(0.0, "p", above=0, maximum=1)
    with pytest.raises(ValueError, match=r"^alpha must be a number >= 0; got nan$"):
        d2l.utils.check_number(float("nan"), "alpha", minimum=0)  # NaN is in no range
    with pytest.raises(ValueError, match="got nan"):
        d2l.utils.check_number(float("nan"), "x")
    # the modules use them: one wording everywhere
    with pytest.raises(ValueError, match="timeout must be a number > 0; got 0"):
        d2l.download("fra-eng", timeout=0)
    with pytest.raises(ValueError, match="alpha must be a number >= 0; got -0.5"):
        d2l.length_penalty("gnmt", -0.5)


def test_the_version_has_one_value():
    """``d2lmini/_version.py`` holds it; the package face, the data modules' announcements and
    pyproject.toml say the same."""
    import re
    from pathlib import Path

    import d2lmini._version
    import d2lmini.datahub

    assert d2l.__version__ == d2lmini._version.__version__
    for lang in ("en", "zh"):
        assert f"d2lmini {d2l.__version__}" in d2lmini.datahub._KIND_TEXT[lang]["offline"]
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8")
    assert re.search(r'^version = "([^"]+)"$', pyproject, re.M)[1] == d2l.__version__


def test_in_notebook_is_false_outside_a_kernel(monkeypatch):
    assert d2l.utils.in_notebook() is False
    import IPython

    class ZMQInteractiveShell:  # the class name is what identifies a Jupyter kernel
        pass
    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    assert d2l.utils.in_notebook() is True


def test_set_axes_applies_every_setting():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([1, 10], [1, 100], label="a")
    d2l.set_axes(ax, "x", "y", [1, 10], [1, 100], "log", "linear", ["curve"])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x", "y")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    assert tuple(ax.get_xlim()) == (1, 10) and tuple(ax.get_ylim()) == (1, 100)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["curve"]
    plt.close(fig)


def _line_chart():
    import altair as alt

    return alt.Chart(alt.sequence(1, 10, as_="x")).mark_line().encode(x="x:Q", y="x:Q")


def test_interactive_figure_has_the_chart_the_static_figure_and_its_html():
    import base64
    import html
    import json
    import re

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 1, 2])
    live = book.interactive(_line_chart(), fig)
    assert not plt.fignum_exists(fig.number)  # closed: Jupyter does not show it a second time
    bundle = live._repr_mimebundle_()
    assert bundle["image/svg+xml"] == live.svg and live.svg.lstrip().startswith("<?xml")
    spec = bundle["application/vnd.vegalite.v6+json"]
    assert spec == live.spec and spec["mark"] == {"type": "line"}
    div = bundle["text/html"]
    assert div.startswith('<div class="d2l-vega" data-spec="') and div.endswith("</div>")
    data = re.search(r'data-spec="([^"]*)"', div).group(1)
    assert json.loads(html.unescape(data)) == spec  # the specification survives the attribute
    image = re.search(r'<img class="d2l-vega-static" alt="" src="data:image/svg\+xml;base64,'
                      r'([^"]+)">', div).group(1)
    assert base64.b64decode(image).decode() == live.svg
    # the same SVG on every run: no date, no random ids
    fig2, ax2 = plt.subplots()
    ax2.plot([1, 2, 3], [3, 1, 2])
    assert book.interactive(_line_chart(), fig2).svg == live.svg


def test_interactive_takes_a_dict_and_names_the_schema_version():
    import matplotlib.pyplot as plt

    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.20.1.json", "mark": "point",
            "description": "a chart"}
    live = book.interactive(spec, plt.figure())
    assert "application/vnd.vegalite.v5+json" in live._repr_mimebundle_()
    assert repr(live) == "<InteractiveFigure: a chart>"
    bare = book.interactive({"mark": "point"}, plt.figure())
    assert book.interactive_figures.VEGALITE_MIME in bare._repr_mimebundle_()


def test_interactive_names_its_wrong_arguments():
    import matplotlib.pyplot as plt

    with pytest.raises(TypeError, match="chart must be an Altair chart"):
        book.interactive("a chart", plt.figure())
    with pytest.raises(TypeError, match="figure must be a matplotlib Figure"):
        book.interactive(_line_chart(), plt.gca())
    plt.close("all")


def _tick_labels_overlap(ax) -> list[str]:
    """The visible tick labels of ``ax`` (major and minor) whose boxes overlap a neighbour's."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for axis in (ax.xaxis, ax.yaxis):
        lo, hi = sorted(axis.get_view_interval())
        labels = [t.label1 for t in axis.get_major_ticks() + axis.get_minor_ticks()
                  if t.label1.get_visible() and t.label1.get_text()
                  and lo <= t.get_loc() <= hi]
        boxes = [(lab.get_window_extent(renderer), lab.get_text()) for lab in labels]
        for i, (a, ta) in enumerate(boxes):
            for b, tb in boxes[i + 1:]:
                if a.overlaps(b):
                    found.append(f"{ta!r} / {tb!r}")
    return found


@pytest.mark.parametrize("xs, ys", [
    ([128, 256, 512, 1024], [1.0, 2.5, 7.0, 30.0]),  # the appendix's attention benchmark
    ([10, 20, 50, 100, 200], [3.1, 3.4, 3.9, 4.6, 6.0]),  # the decode benchmark: narrow y
    ([300, 400, 600], [0.02, 0.03, 0.05]),
])
def test_log_axes_spanning_less_than_two_decades_have_readable_tick_labels(xs, ys):
    """zh review m17 / en review m3: on a log axis spanning less than a decade matplotlib
    labels the minor ticks, "2×10² 3×10²4×10² 6×10²", run together."""
    import matplotlib.pyplot as plt

    ax = d2l.plot(xs, [ys, [2 * y for y in ys]], xscale="log", yscale="log",
                  legend=["a", "b"], figsize=(4.5, 3))
    try:
        assert not _tick_labels_overlap(ax)
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            shown = [t.label1.get_text() for t in axis.get_major_ticks()
                     if t.label1.get_text() and lo <= t.get_loc() <= hi]
            assert len(shown) >= 2, shown  # the axis can still be read
            assert not any("\\times" in s or "×" in s for s in shown), shown
    finally:
        plt.close(ax.figure)


def test_wide_log_axes_keep_matplotlib_labels_at_powers_of_ten():
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    ax = d2l.plot([1, 10, 100, 1000, 10000], [1, 2, 3, 4, 5], xscale="log")
    try:
        assert isinstance(ax.xaxis.get_major_formatter(), ticker.LogFormatterSciNotation)
        assert not _tick_labels_overlap(ax)
    finally:
        plt.close(ax.figure)
