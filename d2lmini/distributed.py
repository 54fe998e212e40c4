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
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, Dataset, DistributedSampler, TensorDataset

from .train import TrainConfig, Trainer, TrainResult
from .utils import check_non_negative_int, check_number, check_positive_int

__all__ = ["setup_distributed", "cleanup_distributed", "Checkpointer", "train_seq2seq_ddp"]

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
    raise TypeError("data must be a Dataset of (X, X_valid_len, Y, Y_valid_len) items or a "
                    f"sequence of these four tensors; got {type(data).__name__}")


class Checkpointer:
    """Save and resume a training run in one file.

    ``save`` (rank 0 writes; every rank waits at a barrier) stores ``{model, optimizer,
    scheduler, epoch, losses}`` plus the ``identity`` settings, atomically: a temporary file
    then ``os.replace``, so the path always holds a whole checkpoint. Only tensors and plain
    containers are stored, so it loads with ``torch.load(path, weights_only=True)``.
    ``resume`` loads an existing checkpoint into the model, optimizer and scheduler after
    checking that its ``identity`` settings (global batch size, seed) match.
    """

    def __init__(self, path: str | os.PathLike, every: int = 1, *, rank: int = 0,
                 identity: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.every = check_positive_int(every, "checkpoint_every")
        self.rank, self.identity = rank, dict(identity or {})

    def due(self, epochs_done: int, last: bool) -> bool:
        """Whether to save after ``epochs_done`` epochs (every ``every``, and the last)."""
        return last or epochs_done % self.every == 0

    def save(self, epochs_done: int, net: nn.Module, optimizer: torch.optim.Optimizer,
             scheduler: Any, losses: list[float]) -> None:
        if self.rank == 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            state = {"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                     "scheduler": scheduler.state_dict() if scheduler is not None else None,
                     "epoch": epochs_done, "losses": list(losses), **self.identity}
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            try:
                torch.save(state, tmp)
                os.replace(tmp, self.path)
            finally:
                tmp.unlink(missing_ok=True)
        if dist.is_available() and dist.is_initialized():
            dist.barrier()  # the file is complete before any rank goes on

    def resume(self, net: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any,
               device: torch.device) -> tuple[int, list[float]] | None:
        """Load the checkpoint if it exists: returns ``(epochs_done, losses)``, else None."""
        if not self.path.is_file():
            return None
        ckpt = torch.load(self.path, map_location=device, weights_only=True)
        for key, value in self.identity.items():
            if ckpt[key] != value:
                raise ValueError(f"{key} must match the checkpoint {self.path} to resume it: "
                                 f"{ckpt[key]} there, {value} here (or pass resume=False)")
        net.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        if scheduler is not None and ckpt["scheduler"] is not None:
            scheduler.load_state_dict(ckpt["scheduler"])
        return ckpt["epoch"], list(ckpt["losses"])


def _loader(dataset: Dataset, global_batch_size: int, world: int, rank: int, seed: int,
            device: torch.device) -> DataLoader:
    """Each step's global batch is a contiguous block of one seeded permutation; this rank
    gets its ``1 / world`` share (the last incomplete global batch is dropped)."""
    if len(dataset) < global_batch_size:
        raise ValueError(f"global_batch_size must be at most the number of examples "
                         f"{len(dataset)}; got {global_batch_size}")
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True,
                                 seed=seed, drop_last=True)
    return DataLoader(dataset, batch_size=global_batch_size // world, sampler=sampler,
                      drop_last=True, pin_memory=device.type == "cuda")


def train_seq2seq_ddp(net: nn.Module, data: Dataset | Sequence[torch.Tensor], tgt_vocab: Any,
                      config: TrainConfig, *, global_batch_size: int,
                      device: torch.device | str,
                      scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
                      checkpoint_path: str | os.PathLike | None = None,
                      checkpoint_every: int = 1, resume: bool = True, seed: int = 0,
                      max_seconds: float | None = None,
                      log: Callable[[str], Any] | None = print) -> TrainResult:
    """Train a sequence-to-sequence model with teacher forcing, data-parallel with DDP.

    Call it in every process after :func:`setup_distributed` (or in a single plain process).
    It is the library's :class:`d2lmini.Trainer` with the recipe ``config`` (its ``seed`` is
    set to ``seed``), on a global batch of ``global_batch_size`` examples split evenly over
    the ranks (see the module's docstring: neither the examples of a step nor, up to
    rounding, its gradient depend on the world size). ``data``: a ``Dataset`` of ``(X (S,),
    X_valid_len (), Y (T,), Y_valid_len ())`` items, or those four tensors with a leading
    axis N. ``net`` is trained in place. ``scheduler``: as for :class:`d2lmini.Trainer`.

    ``checkpoint_path``: a :class:`Checkpointer` saves there every ``checkpoint_every``
    epochs and after the last; with ``resume`` an existing checkpoint is continued (on the
    CPU bit for bit as the uninterrupted run). ``seed`` seeds the shuffling, the
    initialisation and, per epoch and rank, dropout. ``max_seconds`` stops after the epoch
    at which the next one would exceed the budget. ``log`` gets one line per epoch on rank 0
    (``None``: silent).

    Returns:
        :class:`d2lmini.TrainResult`: mean loss per token for every epoch (over all ranks,
        earlier epochs of a resumed run included), target tokens per second over all ranks
        and the seconds of this call's training.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig; got {type(config).__name__}")
    distributed = dist.is_available() and dist.is_initialized()
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    check_positive_int(global_batch_size, "global_batch_size")
    check_positive_int(checkpoint_every, "checkpoint_every")
    if global_batch_size % world:
        raise ValueError(f"global_batch_size must be divisible by the world size {world}; "
                         f"got {global_batch_size}")
    check_non_negative_int(seed, "seed")
    if max_seconds is not None:
        check_number(max_seconds, "max_seconds", above=0)
    device = torch.device(device)
    loader = _loader(_as_dataset(data), global_batch_size, world, rank, seed, device)
    trainer = Trainer(net, tgt_vocab, replace(config, seed=seed), device, scheduler=scheduler)
    checkpointer = None if checkpoint_path is None else Checkpointer(
        checkpoint_path, checkpoint_every, rank=rank,
        identity={"global_batch_size": global_batch_size, "seed": seed})
    return trainer.fit(loader, checkpointer=checkpointer, resume=resume,
                       max_seconds=max_seconds, log=log)
