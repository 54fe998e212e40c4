"""Tests of d2lmini.distributed: DDP on two CPU processes (gloo) equals one process on the same
global batch, checkpoint/resume equals an uninterrupted run, argument checks, and the
scripts/train_full.py smoke run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import d2lmini as d2l
from d2lmini import distributed

REPO_ROOT = Path(__file__).resolve().parents[2]
VOCAB_SIZE, STEPS = 12, 6


def _copy_data(vocab, n=48, seed=0):
    """A copy task in ``vocab`` (tests/library/conftest.py's ``tiny_vocab``):
    (X, X_valid_len, Y, Y_valid_len) with Y = X, words then <eos> then <pad>s."""
    assert len(vocab) == VOCAB_SIZE
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(2, STEPS, (n,), generator=g)
    X = torch.randint(vocab["<eos>"] + 1, VOCAB_SIZE, (n, STEPS), generator=g)
    X = torch.where(torch.arange(STEPS)[None, :] < lens[:, None], X,
                    torch.full_like(X, vocab["<pad>"]))
    X[torch.arange(n), lens] = vocab["<eos>"]
    return X, lens + 1, X.clone(), lens + 1


def _net(dropout=0.0):
    torch.manual_seed(0)
    return d2l.make_transformer(VOCAB_SIZE, VOCAB_SIZE, 16, 32, 2, 1, dropout)


_RECIPE = ("lr", "num_epochs", "grad_clip", "label_smoothing", "amp")


def _train(vocab, net, **kw):
    recipe = dict(lr=1e-3, num_epochs=2, label_smoothing=0.1)
    recipe.update({k: kw.pop(k) for k in _RECIPE if k in kw})
    settings = dict(global_batch_size=8, device="cpu", log=None, seed=3,
                    scheduler=lambda opt: torch.optim.lr_scheduler.LambdaLR(
                        opt, lambda step: min(1.0, (step + 1) / 4)))
    settings.update(kw)
    return d2l.train_seq2seq_ddp(net, _copy_data(vocab), vocab, d2l.TrainConfig(**recipe),
                                 **settings)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny models: one intra-op thread is fastest and keeps shared CPUs from thrashing."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ddp_worker(rank: int, world_size: int, port: int, out_dir: str, vocab: d2l.Vocab) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    got_rank, got_world, device = d2l.setup_distributed()
    assert (got_rank, got_world, device.type) == (rank, world_size, "cpu")
    assert dist.get_backend() == "gloo"
    try:
        lines = []
        net = _net()
        result = _train(vocab, net, checkpoint_path=Path(out_dir) / "ckpt.pt", log=lines.append)
        torch.save({"state": net.state_dict(), "losses": result.losses, "lines": lines},
                   Path(out_dir) / f"rank{rank}.pt")
    finally:
        d2l.cleanup_distributed()


def test_ddp_two_processes_equal_one_process_on_the_global_batch(tmp_path, monkeypatch,
                                                                 tiny_vocab):
    net = _net()
    single = _train(tiny_vocab, net)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # workers: CPUs and gloo, even on a GPU host
    mp.spawn(_ddp_worker, args=(2, _free_port(), str(tmp_path), tiny_vocab), nprocs=2, join=True)
    outs = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    for out in outs:
        assert out["losses"] == pytest.approx(single.losses, abs=1e-6)
        for name, p in net.state_dict().items():
            torch.testing.assert_close(out["state"][name], p, atol=1e-5, rtol=0, msg=name)
    # only rank 0 logs; it wrote one checkpoint, loadable with weights_only=True
    assert len(outs[0]["lines"]) == 3 and outs[1]["lines"] == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("ckpt")] == ["ckpt.pt"]
    ckpt = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    assert ckpt["epoch"] == 2 and ckpt["losses"] == outs[0]["losses"]
    for name, p in outs[0]["state"].items():
        assert torch.equal(ckpt["model"][name], p)


def test_resume_reproduces_an_uninterrupted_run_exactly(tmp_path, tiny_vocab):
    ckpt = tmp_path / "run" / "ckpt.pt"
    full_net = _net(dropout=0.1)
    full = _train(tiny_vocab, full_net, num_epochs=3)
    first = _train(tiny_vocab, _net(dropout=0.1), num_epochs=2, checkpoint_path=ckpt)
    state = torch.load(ckpt, weights_only=True)  # tensors and plain containers only
    assert state["epoch"] == 2 and state["losses"] == first.losses
    assert set(state) >= {"model", "optimizer", "scheduler", "epoch", "losses"}
    lines = []
    resumed_net = _net(dropout=0.1)
    resumed = _train(tiny_vocab, resumed_net, num_epochs=3, checkpoint_path=ckpt, log=lines.append)
    assert lines[0] == f"resumed from {ckpt} after epoch 2" and len(lines) == 3
    assert resumed.losses == full.losses and first.losses == full.losses[:2]
    for (name, a), b in zip(full_net.state_dict().items(), resumed_net.state_dict().values()):
        assert torch.equal(a, b), name
    assert torch.load(ckpt, weights_only=True)["epoch"] == 3
    # a finished checkpoint leaves nothing to do; resume=False starts afresh
    assert _train(tiny_vocab, _net(), num_epochs=3, checkpoint_path=ckpt).losses == full.losses
    fresh = _train(tiny_vocab, _net(dropout=0.1), num_epochs=1, checkpoint_path=ckpt, resume=False)
    assert fresh.losses == full.losses[:1]
    assert torch.load(ckpt, weights_only=True)["epoch"] == 1


def test_max_seconds_stops_at_an_epoch_boundary_and_checkpoints(tmp_path, tiny_vocab):
    result = _train(tiny_vocab, _net(), num_epochs=50, max_seconds=1e-3,
                    checkpoint_path=tmp_path / "c.pt")
    assert len(result.losses) == 1
    assert torch.load(tmp_path / "c.pt", weights_only=True)["epoch"] == 1


@pytest.mark.parametrize("kw, match", [
    (dict(global_batch_size=0), "global_batch_size"),
    (dict(global_batch_size=49), "global_batch_size"),
    (dict(lr=0), "lr"),
    (dict(num_epochs=0), "num_epochs"),
    (dict(grad_clip=-1.0), "grad_clip"),
    (dict(label_smoothing=1.0), "label_smoothing"),
    (dict(amp=True), "amp"),  # bf16 autocast needs CUDA
    (dict(checkpoint_every=0), "checkpoint_every"),
    (dict(seed=-1), "seed"),
    (dict(max_seconds=0), "max_seconds"),
])
def test_train_seq2seq_ddp_rejects_bad_arguments(kw, match, tiny_vocab):
    with pytest.raises(ValueError, match=match):
        _train(tiny_vocab, _net(), **kw)


@pytest.mark.parametrize("kw, match", [
    (dict(lr="0.1"), "lr must be a number"),
    (dict(num_epochs=2.0), "num_epochs must be a positive int"),
    (dict(seed=True), "seed must be a non-negative int"),
    (dict(amp="yes"), "amp must be a bool"),
])
def test_train_seq2seq_ddp_rejects_arguments_of_the_wrong_type(kw, match, tiny_vocab):
    with pytest.raises(TypeError, match=match):
        _train(tiny_vocab, _net(), **kw)


def test_checkpointer_saves_whole_files_and_resumes_only_its_own_run(tmp_path):
    cpu = torch.device("cpu")
    net = _net()
    ckpt = d2l.Checkpointer(tmp_path / "run" / "c.pt", every=2, identity={"seed": 3})
    assert ckpt.resume(net, d2l.make_adam(net, 1e-3, cpu), None, cpu) is None  # nothing yet
    assert [ckpt.due(epochs, last=False) for epochs in (1, 2, 3)] == [False, True, False]
    assert ckpt.due(3, last=True)
    ckpt.save(2, net, d2l.make_adam(net, 1e-3, cpu), None, [1.0, 0.5])
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["c.pt"]  # no temporary left
    other = _net(dropout=0.0)
    for p in other.parameters():
        torch.nn.init.zeros_(p)
    assert ckpt.resume(other, d2l.make_adam(other, 1e-3, cpu), None, cpu) == (2, [1.0, 0.5])
    for a, b in zip(net.parameters(), other.parameters()):
        assert torch.equal(a, b)
    stranger = d2l.Checkpointer(tmp_path / "run" / "c.pt", identity={"seed": 4})
    with pytest.raises(ValueError, match="seed must match the checkpoint"):
        stranger.resume(other, d2l.make_adam(other, 1e-3, cpu), None, cpu)


def test_train_seq2seq_ddp_rejects_bad_data_and_mismatched_checkpoint(tmp_path, tiny_vocab):
    X, lx, Y, ly = _copy_data(tiny_vocab)
    with pytest.raises(TypeError, match="data"):
        d2l.train_seq2seq_ddp(_net(), (X, lx, Y), tiny_vocab, d2l.TrainConfig(num_epochs=1),
                              global_batch_size=8, device="cpu")
    with pytest.raises(ValueError, match="first dimension"):
        d2l.train_seq2seq_ddp(_net(), (X, lx, Y[:10], ly), tiny_vocab,
                              d2l.TrainConfig(num_epochs=1), global_batch_size=8, device="cpu")
    _train(tiny_vocab, _net(), num_epochs=1, checkpoint_path=tmp_path / "c.pt")
    with pytest.raises(ValueError, match="global_batch_size must match the checkpoint"):
        _train(tiny_vocab, _net(), global_batch_size=16, checkpoint_path=tmp_path / "c.pt")


def test_global_batch_must_split_evenly_over_the_ranks(monkeypatch, tiny_vocab):
    # pretend to be rank 0 of 3: the check comes before any collective call
    monkeypatch.setattr(distributed.dist, "is_initialized", lambda: True)
    monkeypatch.setattr(distributed.dist, "get_rank", lambda: 0)
    monkeypatch.setattr(distributed.dist, "get_world_size", lambda: 3)
    with pytest.raises(ValueError, match="global_batch_size must be divisible by the world "
                                         "size 3"):
        _train(tiny_vocab, _net())


def test_setup_distributed_without_torchrun(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    rank, world, device = d2l.setup_distributed()
    assert (rank, world) == (0, 1)
    assert device == (torch.device("cuda", 0) if torch.cuda.is_available() else
                      torch.device("cpu"))
    assert not dist.is_initialized()  # no process group for a single process
    d2l.cleanup_distributed()  # a no-op
    with pytest.raises(ValueError, match="backend"):
        d2l.setup_distributed(backend="tcp")
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(ValueError, match="WORLD_SIZE"):
        d2l.setup_distributed()
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "2")
    with pytest.raises(ValueError, match="RANK"):
        d2l.setup_distributed()


def test_train_full_tiny_writes_its_summary(tmp_path):
    out = tmp_path / "results.json"
    env = dict(os.environ, D2LMINI_OFFLINE="1", OMP_NUM_THREADS="1")
    env.pop("WORLD_SIZE", None)
    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "train_full.py"), "--tiny", "--out",
         str(out), "--checkpoint", str(tmp_path / "ckpt.pt")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[d2lmini] fra-eng:" in proc.stdout  # the data source is named
    summary = json.loads(out.read_text())
    assert summary["world_size"] == 1 and summary["torch"] == torch.__version__
    assert summary["epochs"] == len(summary["losses"]) >= 1
    assert summary["seconds"] > 0 and summary["tokens_per_sec"] > 0
    assert 0 <= summary["bleu"] <= 100 and summary["bleu_examples"] > 0
    assert summary["config"]["num_hiddens"] > 0 and summary["data_source"]
    assert (tmp_path / "ckpt.pt").is_file()


def test_translate_after_ddp_training_equals_predict_seq2seq():
    sentences = ["go .", "i am calm .", "he is a good man .", "who are you ?", "run !"]
    src_vocab = d2l.Vocab([s.split() for s in sentences],
                          reserved_tokens=["<pad>", "<bos>", "<eos>"])
    torch.manual_seed(1)
    net = d2l.make_transformer(len(src_vocab), len(src_vocab), 16, 32, 2, 2, 0.0)
    X, X_len = d2l.build_array_nmt([s.split() for s in sentences], src_vocab, 6)
    d2l.train_seq2seq_ddp(net, (X, X_len, X, X_len), src_vocab,
                          d2l.TrainConfig(lr=0.02, num_epochs=40), global_batch_size=5,
                          device="cpu", log=None)  # learns to copy
    batched = d2l.translate(net, [s.split() for s in sentences], src_vocab, src_vocab, 6,
                            torch.device("cpu"), batch_size=3)
    single = [d2l.predict_seq2seq(net, s, src_vocab, src_vocab, 6, "cpu")[0]
              for s in sentences]
    assert [" ".join(t) for t in batched] == single
    assert sum(p == s for p, s in zip(single, sentences)) >= 3  # varied lengths and words
