"""Tests of d2lmini.utils and d2lmini.plotting."""

import random
import time

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import d2lmini as d2l  # noqa: E402


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


def test_accumulator():
    acc = d2l.Accumulator(2)
    acc.add(1, 2.5)
    acc.add(torch.tensor(3.0), 1)
    assert acc[0] == 4.0 and acc[1] == 3.5 and len(acc) == 2
    acc.reset()
    assert acc.data == [0.0, 0.0]


def test_try_gpu_returns_an_available_device():
    device = d2l.try_gpu()
    assert isinstance(device, torch.device)
    torch.zeros(1, device=device)  # usable
    if not torch.cuda.is_available():
        assert device.type in ("cpu", "mps")


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
    assert d2l.check_positive_int(3, "n") == 3
    with pytest.raises(TypeError, match="n must be a positive int; got float 2.0"):
        d2l.check_positive_int(2.0, "n")
    with pytest.raises(TypeError, match="n must be a positive int; got bool True"):
        d2l.check_positive_int(True, "n")
    with pytest.raises(ValueError, match="n must be a positive int; got 0"):
        d2l.check_positive_int(0, "n")
    assert d2l.check_non_negative_int(0, "seed") == 0
    with pytest.raises(ValueError, match="seed must be a non-negative int; got -1"):
        d2l.set_seed(-1)
    with pytest.raises(TypeError, match="n must be a positive int"):
        d2l.Accumulator(1.5)


def test_in_notebook_is_false_outside_a_kernel(monkeypatch):
    assert d2l.in_notebook() is False
    import IPython

    class ZMQInteractiveShell:  # the class name is what identifies a Jupyter kernel
        pass
    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    assert d2l.in_notebook() is True


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
