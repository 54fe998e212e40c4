"""d2lmini.book.cache: trained weights kept on disk under a key of the data and configuration."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from d2lmini.book import cache


def test_fingerprint_is_stable_and_sensitive():
    a = cache.fingerprint([["go", "."]], {"d": 32, "lr": 1e-3})
    assert a == cache.fingerprint([["go", "."]], {"lr": 1e-3, "d": 32})  # dict order ignored
    assert a != cache.fingerprint([["go", "!"]], {"d": 32, "lr": 1e-3})
    assert len(a) == 16 and int(a, 16) >= 0
    with pytest.raises(TypeError, match="JSON"):
        cache.fingerprint(object())


def test_train_cache_dir_order(tmp_path, monkeypatch):
    monkeypatch.setenv("D2LMINI_TRAIN_CACHE", str(tmp_path / "env"))
    assert cache.train_cache_dir(tmp_path / "x") == tmp_path / "x"
    assert cache.train_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("D2LMINI_TRAIN_CACHE")
    monkeypatch.setenv("D2LMINI_CACHE_DIR", str(tmp_path / "dl"))
    assert cache.train_cache_dir() == tmp_path / "dl" / "trained"


def test_load_or_train_trains_once_then_loads(tmp_path):
    calls = []

    def make():
        torch.manual_seed(len(calls) + 1)  # a different initialisation each time
        return nn.Linear(3, 2)

    net = make()

    def train():
        calls.append(1)
        with torch.no_grad():
            net.weight.fill_(0.5)
        return {"seconds": 1.5}

    result, cached = cache.load_or_train(net, "k1", train, cache_dir=tmp_path)
    assert (result, cached, len(calls)) == ({"seconds": 1.5}, False, 1)
    other = make()
    result2, cached2 = cache.load_or_train(other, "k1", lambda: 1 / 0, cache_dir=tmp_path)
    assert cached2 and result2 == {"seconds": 1.5}
    assert torch.equal(other.weight, torch.full((2, 3), 0.5))
    assert torch.equal(other.bias, net.bias)


def test_dataclass_results_come_back_as_dicts(tmp_path):
    from d2lmini import TrainResult
    net = nn.Linear(2, 2)
    r, _ = cache.load_or_train(net, "k2", lambda: TrainResult(losses=[1.0], seconds=2.0),
                               cache_dir=tmp_path)
    r2, cached = cache.load_or_train(net, "k2", lambda: None, cache_dir=tmp_path)
    assert cached and r == r2 and r["losses"] == [1.0] and r["seconds"] == 2.0


def test_bad_arguments(tmp_path):
    net = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="net"):
        cache.load_or_train("net", "k", lambda: None, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="key"):
        cache.load_or_train(net, "../k", lambda: None, cache_dir=tmp_path)
    with pytest.raises(TypeError, match="train"):
        cache.load_or_train(net, "k", None, cache_dir=tmp_path)


TRAIN_IN_A_PROCESS = """
import sys, time, torch
from d2lmini.book import cache
net = torch.nn.Linear(2, 2)
def train():
    with open(sys.argv[2], "a") as f:
        f.write("trained\\n")
    time.sleep(1.0)  # long enough for the other process to ask meanwhile
    return {"by": sys.argv[3]}
result, cached = cache.load_or_train(net, "same-key", train, cache_dir=sys.argv[1])
print(result["by"], cached)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the lock is POSIX flock; Windows trains twice")
def test_two_processes_asking_at_once_train_once(tmp_path):
    """The two editions of the book are built side by side: the second to ask waits for the
    first's training and loads its weights."""
    log = tmp_path / "trainings.log"
    procs = [subprocess.Popen([sys.executable, "-c", TRAIN_IN_A_PROCESS, str(tmp_path / "w"),
                               str(log), name], stdout=subprocess.PIPE, text=True,
                              cwd=Path(cache.__file__).parents[1])
             for name in ("a", "b")]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert log.read_text().splitlines() == ["trained"]
    assert sorted(o[1] for o in outs) == ["False", "True"]  # one trained, the other loaded
    assert outs[0][0] == outs[1][0]  # both got the trainer's result
