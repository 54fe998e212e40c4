"""Data-parallel training with PyTorch's ``DistributedDataParallel`` (DDP).

Launch one process per device with ``torchrun --nproc_per_node N script.py``; each process
calls :func:`setup_distributed`, trains with :func:`train_seq2seq_ddp` and ends with
:func:`cleanup_distributed`. The same script also runs as a single plain process (world
size 1, no process group).

What makes a run with N processes equal to one process on the same global batch:

* every step, the ``global_batch_size`` examples are a contiguous block of one seeded
  permutation of the data set (``DistributedSampler``; the last incomplete global batch of
  each epoch is dropped), and each rank gets ``global_batch_size // world_size`` of them;
* the loss is the summed token loss of the rank divided by the number of target tokens of
  the *global* batch (all-reduced) and multiplied by the world size, so that DDP's averaging
  of the gradients gives exactly the gradient of the mean loss per token of the global batch.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler, TensorDataset

from .attention import keep_attention_weights
from .utils import check_positive_int as _check_positive_int
from .train import (MaskedSoftmaxCELoss, TrainResult, _adam, _teacher_forcing_loss,
                    grad_clipping, xavier_init_weights)

__all__ = ["setup_distributed", "cleanup_distributed", "train_seq2seq_ddp"]

_BACKENDS = ("nccl", "gloo", "mpi")


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an int; got {value!r}") from None


def setup_distributed(backend: str | None = None) -> tuple[int, int, torch.device]:
    """Join the process group described by torchrun's environment and pick this process's
    device.

    Reads ``RANK``, ``WORLD_SIZE`` and ``LOCAL_RANK`` (and, through ``init_method='env://'``,
    ``MASTER_ADDR`` / ``MASTER_PORT``). The device is ``cuda:LOCAL_RANK`` when CUDA is
    available (and becomes the current CUDA device), else the CPU. ``backend`` defaults to
    ``'nccl'`` on CUDA and ``'gloo'`` otherwise.

    Without torchrun (no ``WORLD_SIZE``, or ``WORLD_SIZE=1``) no process group is created and
    ``(0, 1, device)`` is returned, so one script runs both ways.

    Returns:
        ``(rank, world_size, device)``.
    """
    if backend is not None and backend not in _BACKENDS:
        raise ValueError(f"backend must be None or one of {_BACKENDS}; got {backend!r}")
    world_size = _env_int("WORLD_SIZE", 1)
    rank = _env_int("RANK", 0)
    local_rank = _env_int("LOCAL_RANK", 0)
    if world_size < 1 or not 0 <= rank < world_size or local_rank < 0:
        raise ValueError(f"need WORLD_SIZE >= 1, 0 <= RANK < WORLD_SIZE and LOCAL_RANK >= 0; "
                         f"got WORLD_SIZE={world_size}, RANK={rank}, LOCAL_RANK={local_rank}")
    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    if dist.is_available() and dist.is_initialized():  # already set up: report it
        return dist.get_rank(), dist.get_world_size(), device
    if world_size == 1:
        return 0, 1, device
    backend = backend or ("nccl" if device.type == "cuda" else "gloo")
    if backend == "nccl" and device.type != "cuda":
        raise ValueError("backend 'nccl' needs CUDA devices; use 'gloo' on CPUs")
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world_size)
    return rank, world_size, device


def cleanup_distributed() -> None:
    """Destroy the process group if one was created (a no-op otherwise)."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _as_dataset(data: Any) -> Dataset:
    if isinstance(data, Dataset):
        return data
    if (isinstance(data, (list, tuple)) and len(data) == 4
            and all(isinstance(t, torch.Tensor) for t in data)):
        if len({t.shape[0] for t in data}) != 1:
            raise ValueError("data: the four tensors must share their first dimension; got "
                             f"{[tuple(t.shape) for t in data]}")
        return TensorDataset(*data)
    raise ValueError("data must be a Dataset of (X, X_valid_len, Y, Y_valid_len) items or a "
                     f"sequence of these four tensors; got {type(data).__name__}")


def _use_amp(amp: Any, device: torch.device) -> bool:
    if amp == "auto" and isinstance(amp, str):
        return device.type == "cuda"
    if amp is True or amp is False:
        if amp and device.type != "cuda":
            raise ValueError(f"amp=True (bf16 autocast) needs a CUDA device; got {device}")
        return amp
    raise ValueError(f"amp must be 'auto', True or False; got {amp!r}")


def _epoch_seed(seed: int, epoch: int, rank: int) -> int:
    """A seed for the random numbers (dropout) of one rank in one epoch, so that a resumed
    run draws exactly what an uninterrupted one would."""
    return int(np.random.SeedSequence((seed, epoch, rank)).generate_state(1)[0])


def _save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write ``state`` with ``torch.save`` to a temporary file, then rename it into place, so
    that ``path`` always holds a whole checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def train_seq2seq_ddp(net: nn.Module, data: Dataset | Sequence[torch.Tensor], tgt_vocab: Any,
                      *, global_batch_size: int, lr: float, num_epochs: int,
                      device: torch.device | str, grad_clip: float | None = 1.0,
                      label_smoothing: float = 0.0,
                      scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
                      amp: bool | str = "auto",
                      checkpoint_path: str | os.PathLike | None = None,
                      checkpoint_every: int = 1, resume: bool = True, seed: int = 0,
                      init: bool = True, max_seconds: float | None = None,
                      log: Callable[[str], Any] | None = print) -> TrainResult:
    """Train a sequence-to-sequence model with teacher forcing, data-parallel with DDP.

    Call it in every process after :func:`setup_distributed` (or in a single plain process).
    The step is that of :func:`d2lmini.train_seq2seq`: the decoder reads ``<bos>`` followed by
    ``Y[:, :-1]``, masked (optionally label-smoothed) cross-entropy, Adam with learning rate
    ``lr``, gradient clipping to ``grad_clip``, an optional ``scheduler`` factory
    (``lambda opt: LambdaLR(opt, ...)``) stepped once per global step.

    Args:
        net: the model; ``net(X, dec_X, X_valid_len)`` returns ``(logits (B, T, V), state)``.
            It is moved to ``device`` and trained in place (the wrapper is not returned).
        data: a ``Dataset`` whose items are ``(X (S,), X_valid_len (), Y (T,),
            Y_valid_len ())``, or the four tensors ``(X (N, S), X_valid_len (N,), Y (N, T),
            Y_valid_len (N,))``.
        tgt_vocab: the target vocabulary (for ``<bos>``).
        global_batch_size: examples per optimizer step over all processes; each of the
            ``world_size`` ranks takes ``global_batch_size // world_size`` of them. The
            examples of a step do not depend on the world size, and neither (up to rounding)
            does the gradient: it is that of the mean loss per target token of the global
            batch. The last incomplete global batch of each epoch is dropped.
        device: this process's device (from :func:`setup_distributed`).
        amp: ``'auto'`` = bfloat16 autocast on CUDA, none elsewhere; ``True`` (CUDA only) or
            ``False``.
        checkpoint_path: where rank 0 writes ``{model, optimizer, scheduler, epoch, losses,
            global_batch_size, seed}`` every ``checkpoint_every`` epochs, after the last one
            and when ``max_seconds`` stops training (atomically: a temporary file then
            ``os.replace``). Only tensors and plain containers are stored, so it loads with
            ``torch.load(path, weights_only=True)``; every rank must be able to read it.
        resume: when the checkpoint exists, load it and continue with the next epoch (the
            returned ``losses`` include the earlier epochs). On the CPU a resumed run is
            bit-for-bit the uninterrupted run.
        seed: seeds the shuffling (``DistributedSampler``, reshuffled each epoch), the
            initialisation and, per epoch and rank, the global random numbers used by dropout.
            With dropout, ranks draw different masks, so results equal the single-process
            run only in distribution; without dropout they are equal up to rounding.
        init: Xavier initialisation of the linear layers (skipped when resuming).
        max_seconds: stop after the epoch at which the next one would exceed this budget
            (estimated from the epochs so far).
        log: called with one line per epoch on rank 0 (``None``: silent).

    Returns:
        :class:`d2lmini.TrainResult`: mean loss per token for every epoch (over all ranks),
        target tokens per second over all ranks and the seconds of this call's training.
    """
    distributed = dist.is_available() and dist.is_initialized()
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    _check_positive_int(global_batch_size, "global_batch_size")
    if global_batch_size % world:
        raise ValueError(f"global_batch_size must be divisible by the world size {world}; "
                         f"got {global_batch_size}")
    _check_positive_int(num_epochs, "num_epochs")
    _check_positive_int(checkpoint_every, "checkpoint_every")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or not lr > 0:
        raise ValueError(f"lr must be a positive number; got {lr!r}")
    if grad_clip is not None and not grad_clip > 0:
        raise ValueError(f"grad_clip must be None or positive; got {grad_clip!r}")
    if not 0 <= label_smoothing < 1:
        raise ValueError(f"label_smoothing must be in [0, 1); got {label_smoothing!r}")
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"max_seconds must be None or positive; got {max_seconds!r}")
    device = torch.device(device)
    use_amp = _use_amp(amp, device)
    dataset = _as_dataset(data)
    if len(dataset) < global_batch_size:
        raise ValueError(f"global_batch_size must be at most the number of examples "
                         f"{len(dataset)}; got {global_batch_size}")

    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True,
                                 seed=seed, drop_last=True)
    loader = DataLoader(dataset, batch_size=global_batch_size // world, sampler=sampler,
                        drop_last=True, pin_memory=device.type == "cuda")
    net.to(device)
    optimizer = _adam(net, lr, device)
    sched = scheduler(optimizer) if scheduler is not None else None

    path = Path(checkpoint_path) if checkpoint_path is not None else None
    start_epoch, losses = 0, []
    if path is not None and resume and path.is_file():
        ckpt = torch.load(path, map_location=device, weights_only=True)
        for key, value in (("global_batch_size", global_batch_size), ("seed", seed)):
            if ckpt[key] != value:
                raise ValueError(f"{key} must match the checkpoint {path} to resume it: "
                                 f"{ckpt[key]} there, {value} here (or pass resume=False)")
        net.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        if sched is not None and ckpt["scheduler"] is not None:
            sched.load_state_dict(ckpt["scheduler"])
        start_epoch, losses = ckpt["epoch"], list(ckpt["losses"])
        if rank == 0 and log is not None:
            log(f"resumed from {path} after epoch {start_epoch}")
    elif init:
        torch.manual_seed(seed)
        net.apply(xavier_init_weights)

    model = (DistributedDataParallel(net, device_ids=[device] if device.type == "cuda"
                                     else None) if distributed else net)
    loss = MaskedSoftmaxCELoss(label_smoothing)
    bos = tgt_vocab["<bos>"]
    result = TrainResult(losses=losses, device=str(device))
    start, total_tokens, epochs_run = time.perf_counter(), 0, 0

    def checkpoint(epoch: int) -> None:
        if rank == 0:
            _save_checkpoint(path, {
                "model": net.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": sched.state_dict() if sched is not None else None,
                "epoch": epoch, "losses": list(result.losses),
                "global_batch_size": global_batch_size, "seed": seed})
        if distributed:
            dist.barrier()  # the file is complete before any rank goes on

    model.train()
    with keep_attention_weights(net, False):
        for epoch in range(start_epoch, num_epochs):
            sampler.set_epoch(epoch)
            torch.manual_seed(_epoch_seed(seed, epoch, rank))
            epoch_start = time.perf_counter()
            stats = torch.zeros(2, dtype=torch.float64, device=device)  # loss sum, tokens
            for batch in loader:
                l, n = _teacher_forcing_loss(model, batch, loss, bos, device, use_amp)
                n_global = n.clone()
                if distributed:
                    dist.all_reduce(n_global)
                optimizer.zero_grad(set_to_none=True)
                # DDP averages the ranks' gradients: scaling by world / global tokens makes
                # the average the gradient of the global batch's mean loss per token
                (l / n_global * world).backward()
                if grad_clip is not None:
                    grad_clipping(net, grad_clip)
                optimizer.step()
                if sched is not None:
                    sched.step()
                stats += torch.stack([l.detach().double(), n.double()])
            if distributed:
                dist.all_reduce(stats)
            loss_sum, num_tokens = stats.tolist()
            epoch_seconds = time.perf_counter() - epoch_start
            result.losses.append(loss_sum / max(num_tokens, 1))
            total_tokens += int(num_tokens)
            epochs_run += 1
            stop = torch.zeros(1, device=device)
            elapsed = time.perf_counter() - start
            if max_seconds is not None and elapsed * (1 + 1 / epochs_run) > max_seconds:
                stop += 1
            if distributed:
                dist.all_reduce(stop)  # every rank stops at the same epoch
            last = epoch + 1 == num_epochs or bool(stop.item())
            if rank == 0 and log is not None:
                log(f"epoch {epoch + 1}/{num_epochs}: loss {result.losses[-1]:.4f}, "
                    f"{num_tokens / epoch_seconds:,.0f} tokens/s, {epoch_seconds:.1f} s"
                    + (" (time budget reached)" if stop.item() and epoch + 1 < num_epochs
                       else ""))
            if path is not None and ((epoch + 1) % checkpoint_every == 0 or last):
                checkpoint(epoch + 1)
            if last:
                break
    result.seconds = time.perf_counter() - start
    result.tokens_per_sec = total_tokens / result.seconds
    if rank == 0 and log is not None and result.losses:
        log(f"loss {result.losses[-1]:.3f}, {result.tokens_per_sec:.1f} tokens/sec on "
            f"{world} x {device.type}")
    return result
