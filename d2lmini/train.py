"""Training sequence-to-sequence models: the masked loss, one teacher-forced training step,
the training loop, BLEU and the paper's learning-rate schedule. (Decoding is in
:mod:`d2lmini.decode`.)

Shapes: ``B`` sentences, ``S`` source steps, ``T`` target steps, ``V`` target vocabulary.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from .attention import store_attention_weights, lengths_to_mask
from .utils import (Timer, check_bool, check_int, check_non_negative_int, check_number,
                    check_positive_int, in_notebook)

__all__ = [
    "sequence_mask",
    "MaskedSoftmaxCELoss",
    "grad_clipping",
    "xavier_init_weights",
    "init_seq2seq_weights",
    "make_adam",
    "Seq2SeqBatch",
    "teacher_forcing_loss",
    "seq2seq_step",
    "TrainResult",
    "TrainConfig",
    "Trainer",
    "train_seq2seq",
    "transformer_lr_lambda",
    "average_checkpoints",
]


def sequence_mask(X: torch.Tensor, valid_len: torch.Tensor, value: float = 0) -> torch.Tensor:
    """Replace the entries of X ``(B, T, ...)`` at positions ``t >= valid_len[b]`` by
    ``value`` and return the result (a new tensor). valid_len has shape ``(B,)``.

    Taught in :ref:`sec-training-translation-loss`.
    """
    if X.dim() < 2 or valid_len.shape != X.shape[:1]:  # @check
        raise ValueError(f"X must have shape (batch_size, num_steps, ...) and valid_len "
                         f"(batch_size,); got {tuple(X.shape)} and {tuple(valid_len.shape)}")
    mask = lengths_to_mask(valid_len, X.shape[1])  # (B, T)
    mask = mask.reshape(mask.shape + (1,) * (X.dim() - 2))
    return X.masked_fill(~mask, value)


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    """Softmax cross-entropy that ignores padding.

    forward(pred ``(B, T, V)`` logits, label ``(B, T)``, valid_len ``(B,)``) -> ``(B,)``:
    for each sequence the *sum* of the token losses over its first ``valid_len`` positions.
    Padding contributes exactly nothing, so ``loss.sum() / valid_len.sum()`` is the mean
    loss per real token.

    ``label_smoothing`` (the paper's eps_ls = 0.1) as in ``nn.CrossEntropyLoss``: the target
    puts ``1 - eps`` on the label and spreads ``eps`` uniformly over all ``V`` classes. With
    ``pad_index`` the ``eps`` is spread over the ``V - 2`` classes that are neither the label
    nor ``<pad>`` instead (The Annotated Transformer's recipe), so ``<pad>``, which never is a
    real target, gets no probability mass.

    Taught in :ref:`sec-training-translation-loss`.
    """

    def __init__(self, label_smoothing: float = 0.0, *, pad_index: int | None = None) -> None:
        if not 0 <= label_smoothing < 1:  # @check
            raise ValueError(f"label_smoothing must be in [0, 1); got {label_smoothing!r}")
        super().__init__(reduction="none",
                         label_smoothing=label_smoothing if pad_index is None else 0.0)
        self.eps, self.pad_index = label_smoothing, pad_index

    def forward(self, pred: torch.Tensor, label: torch.Tensor,
                valid_len: torch.Tensor) -> torch.Tensor:
        if pred.dim() != 3 or label.shape != pred.shape[:2]:  # @check
            raise ValueError(f"pred must have shape (batch_size, num_steps, vocab_size) and "
                             f"label (batch_size, num_steps); got {tuple(pred.shape)} and "
                             f"{tuple(label.shape)}")
        weights = sequence_mask(torch.ones_like(label, dtype=pred.dtype), valid_len)
        # one row of V class scores per position, (B * T, V): contiguous in memory (the
        # (B, V, T) layout nn.CrossEntropyLoss also takes is read with strides, ~2x slower)
        unweighted_loss = super().forward(pred.flatten(0, 1), label.flatten())
        unweighted_loss = unweighted_loss.reshape(label.shape)  # (B, T)
        if self.pad_index is not None and self.eps > 0:
            unweighted_loss = self._smooth_without_pad(pred, unweighted_loss)
        return (unweighted_loss * weights).sum(dim=1)

    def _smooth_without_pad(self, pred: torch.Tensor, nll: torch.Tensor) -> torch.Tensor:
        """(1 - eps) * nll + eps * the mean of -log p over the V - 2 other classes."""
        logp = F.log_softmax(pred, dim=-1)  # (B, T, V); nll = -log p(label)
        others = -logp.sum(dim=-1) + logp[..., self.pad_index] - nll
        return (1 - self.eps) * nll + self.eps * others / (pred.shape[-1] - 2)


def grad_clipping(net: nn.Module, theta: float) -> torch.Tensor:
    """Rescale all gradients of ``net`` so that their global L2 norm is at most ``theta``;
    returns the norm before clipping (``torch.nn.utils.clip_grad_norm_``).

    Taught in :ref:`sec-training-translation-training`.
    """
    if not theta > 0:  # @check
        raise ValueError(f"theta must be positive; got {theta!r}")
    params = [p for p in net.parameters() if p.grad is not None]
    return torch.nn.utils.clip_grad_norm_(params, theta)


def xavier_init_weights(m: nn.Module) -> None:
    """Xavier-uniform initialisation for the weights of linear layers (use with
    ``net.apply``); embeddings and LayerNorms keep their defaults."""
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)


def init_seq2seq_weights(net: nn.Module) -> None:
    """:func:`xavier_init_weights` for every linear layer of ``net`` (in ``net.apply``'s
    order), except a weight that is also an embedding matrix: a tied output projection
    keeps the embedding's initialisation (entries of about ``1 / sqrt(d)``)."""
    embeddings = {id(m.weight) for m in net.modules() if isinstance(m, nn.Embedding)}
    net.apply(lambda m: None if id(getattr(m, "weight", None)) in embeddings
              else xavier_init_weights(m))


def make_adam(net: nn.Module, lr: float, device: torch.device | str,
              betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> torch.optim.Adam:
    """Adam over the parameters of ``net``; on CPU and CUDA PyTorch's fused implementation
    (one kernel updates every parameter instead of a dozen small operations per tensor; the
    same update rule)."""
    fused = torch.device(device).type in ("cpu", "cuda")
    return torch.optim.Adam(net.parameters(), lr=lr, betas=betas, eps=eps, fused=fused or None)


class Seq2SeqBatch(NamedTuple):
    """A batch of sentence pairs: ``src`` ``(B, S)`` and ``tgt`` ``(B, T)`` token ids padded
    to a common length, ``src_len`` and ``tgt_len`` ``(B,)`` their valid lengths. A data
    loader's 4-tuples ``(X, X_valid_len, Y, Y_valid_len)`` convert with ``Seq2SeqBatch(*b)``.

    Taught in :ref:`sec-training-translation-training`.
    """

    src: torch.Tensor
    src_len: torch.Tensor
    tgt: torch.Tensor
    tgt_len: torch.Tensor

    def trimmed(self) -> Seq2SeqBatch:
        """The batch without the columns beyond its longest source and target sentence
        (they hold only padding)."""
        S, T = max(int(self.src_len.max()), 1), max(int(self.tgt_len.max()), 1)
        return self._replace(src=self.src[:, :S], tgt=self.tgt[:, :T])

    def to(self, device: torch.device | str) -> Seq2SeqBatch:
        return Seq2SeqBatch(*(t.to(device, non_blocking=True) for t in self))


def teacher_forcing_loss(net: nn.Module, batch: Sequence[torch.Tensor],
                         loss: MaskedSoftmaxCELoss, bos: int, device: torch.device | str,
                         amp: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """One teacher-forced forward pass of a :class:`Seq2SeqBatch` (or 4-tuple): the decoder
    reads ``<bos>`` followed by ``tgt[:, :-1]`` and predicts ``tgt``.

    The batch is trimmed to its longest sentences first (:meth:`Seq2SeqBatch.trimmed`: the
    padding columns would only be masked; the result is the same up to dropout's random
    draws) and moved to ``device``. With ``amp`` (CUDA) the model runs under bfloat16
    autocast and the loss is computed in float32.

    Returns ``(loss_sum, num_tokens)``: the summed token loss (scalar) and the number of
    target tokens (int64 scalar), so that ``loss_sum / num_tokens`` is the mean per token.

    Taught in :ref:`sec-training-translation-training`.
    """
    src, src_len, tgt, tgt_len = Seq2SeqBatch(*batch).trimmed().to(device)
    bos_col = torch.full((tgt.shape[0], 1), bos, dtype=tgt.dtype, device=tgt.device)
    dec_input = torch.cat([bos_col, tgt[:, :-1]], dim=1)  # teacher forcing
    if amp:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            logits = net(src, dec_input, src_len)[0].float()
    else:
        logits, _ = net(src, dec_input, src_len)
    return loss(logits, tgt, tgt_len).sum(), tgt_len.sum()


def seq2seq_step(net: nn.Module, batch: Sequence[torch.Tensor], loss: MaskedSoftmaxCELoss,
                 optimizer: torch.optim.Optimizer, bos: int, device: torch.device | str, *,
                 grad_clip: float | None = 1.0, scheduler: Any = None, amp: bool = False,
                 divisor: Callable[[torch.Tensor], torch.Tensor] | None = None,
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """One optimizer step on one batch: :func:`teacher_forcing_loss`, backward of the mean
    loss per target token, gradient clipping to ``grad_clip``, ``optimizer.step()`` and
    ``scheduler.step()`` (if given).

    ``divisor`` maps the batch's number of target tokens to what the summed loss is divided
    by (default: that number). Data-parallel training passes the global number of tokens
    divided by the world size, so that averaging the ranks' gradients gives the gradient of
    the global batch's mean loss per token.

    Returns ``(loss_sum, num_tokens)`` of the batch (detached).

    Taught in :ref:`sec-training-translation-training`.
    """
    loss_sum, num_tokens = teacher_forcing_loss(net, batch, loss, bos, device, amp)
    optimizer.zero_grad(set_to_none=True)
    (loss_sum / (num_tokens if divisor is None else divisor(num_tokens))).backward()
    if grad_clip is not None:
        grad_clipping(net, grad_clip)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    return loss_sum.detach(), num_tokens


@dataclass
class TrainResult:
    """What :meth:`Trainer.fit` (and :func:`train_seq2seq`, :func:`d2lmini.train_seq2seq_ddp`)
    returns."""

    losses: list[float] = field(default_factory=list)  #: mean loss per token, per epoch
    tokens_per_sec: float = 0.0  #: target tokens processed per second of training
    seconds: float = 0.0  #: wall-clock training time (evaluation not counted)
    device: str = "cpu"
    steps: int = 0  #: optimizer steps taken (in this call)
    evaluations: list[Any] = field(default_factory=list)  #: ``evaluate``'s value, per epoch
    num_snapshots: int = 0  #: snapshots of the weights averaged into ``averaged``
    averaged: dict[str, torch.Tensor] | None = None  #: their mean (:func:`average_checkpoints`)


@dataclass(frozen=True)
class TrainConfig:
    """The recipe of a training run (the optimizer, the schedule, the loss, what to keep);
    not the data and not the model.

    ``TrainConfig()`` is d2l's loop: Adam at a constant rate, plain cross-entropy, clipping
    to norm 1. The paper's recipe sets ``betas=(0.9, 0.98)``, ``eps=1e-9``, ``warmup_steps``
    and ``num_hiddens`` (the paper's d_model; the rate is then ``lr`` times
    :func:`transformer_lr_lambda`),
    ``label_smoothing=0.1`` (with ``smoothing_skips_pad``) and ``num_snapshots`` for
    checkpoint averaging: snapshots of the weights every ``snapshot_every`` of all steps at
    the end of training. ``seed``, when set, seeds the initialisation and, per epoch (and
    rank), dropout, so that a resumed run draws what an uninterrupted one would.

    Taught in :ref:`sec-training-translation-real`.
    """

    num_epochs: int = 10
    lr: float = 1e-3  # Adam's rate; with warmup_steps, the factor of the paper's schedule
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    warmup_steps: int | None = None  # the paper's schedule (with num_hiddens); None: constant
    num_hiddens: int | None = None  # the model's width, the paper's d_model
    label_smoothing: float = 0.0
    smoothing_skips_pad: bool = False  # no smoothing mass on <pad>
    grad_clip: float | None = 1.0  # the largest global gradient norm; None: no clipping
    num_snapshots: int = 0  # snapshots of the weights at the end, averaged
    snapshot_every: float = 0.02  # the share of all steps between two snapshots
    init: bool = True  # Xavier initialisation first (init_seq2seq_weights)
    amp: bool = False  # bfloat16 autocast (CUDA)
    seed: int | None = None

    def __post_init__(self) -> None:
        check_positive_int(self.num_epochs, "num_epochs")
        check_number(self.lr, "lr", above=0)
        if not isinstance(self.betas, tuple) or len(self.betas) != 2:  # @check
            raise TypeError(f"betas must be a tuple of two numbers; got {self.betas!r}")
        for beta in self.betas:  # @check
            check_number(beta, "betas", minimum=0, below=1)
        check_number(self.eps, "eps", minimum=0)  # @check
        if (self.warmup_steps is None) != (self.num_hiddens is None):
            raise ValueError("warmup_steps and num_hiddens go together (the paper's schedule "
                             f"needs both); got warmup_steps={self.warmup_steps!r}, "
                             f"num_hiddens={self.num_hiddens!r}")
        if self.warmup_steps is not None:  # @check
            check_positive_int(self.warmup_steps, "warmup_steps")
            check_positive_int(self.num_hiddens, "num_hiddens")
        check_number(self.label_smoothing, "label_smoothing", minimum=0, below=1)  # @check
        if self.grad_clip is not None:  # @check
            check_number(self.grad_clip, "grad_clip", above=0)
        check_int(self.num_snapshots, "num_snapshots", minimum=0)  # @check
        check_number(self.snapshot_every, "snapshot_every", above=0, maximum=1)  # @check
        for name in ("smoothing_skips_pad", "init", "amp"):  # @check
            check_bool(getattr(self, name), name)
        if self.seed is not None:  # @check
            check_non_negative_int(self.seed, "seed")


class Trainer:
    """Teacher-forced training of a sequence-to-sequence model by one :class:`TrainConfig`:
    the optimizer, schedule and loss it builds, one step (:func:`seq2seq_step`), one epoch,
    and :meth:`fit`, which also keeps the snapshots for checkpoint averaging. It is the
    library's one training loop: :func:`train_seq2seq`, :func:`d2lmini.train_seq2seq_ddp`,
    ``bench/`` and ``scripts/train_full.py`` use it. In a process group
    (:func:`d2lmini.setup_distributed`) it wraps ``net`` in ``DistributedDataParallel``
    and divides each rank's loss so that the averaged gradient is the global batch's.

    Args:
        net: the model, trained in place (initialised if ``config.init``, moved to ``device``).
        tgt_vocab: the target vocabulary (its ``<bos>`` and ``<pad>``).
        config: the recipe (default ``TrainConfig()``).
        device: where to train.
        scheduler: a factory ``optimizer -> scheduler``, stepped per batch, for a schedule
            other than the paper's (not together with ``config.warmup_steps``).

    Taught in :ref:`sec-training-translation-real`.
    """

    def __init__(self, net: nn.Module, tgt_vocab: Any, config: TrainConfig | None = None,
                 device: torch.device | str = "cpu", *,
                 scheduler: Callable[[torch.optim.Optimizer], Any] | None = None) -> None:
        config = TrainConfig() if config is None else config
        if not isinstance(config, TrainConfig):  # @check
            raise TypeError(f"config must be a TrainConfig; got {type(config).__name__}")
        if scheduler is not None and config.warmup_steps is not None:  # @check
            raise ValueError("scheduler: pass a schedule or config.warmup_steps, not both")
        self.config, self.device = config, torch.device(device)
        if config.amp and self.device.type != "cuda":  # @check
            raise ValueError(f"amp (bfloat16 autocast) needs a CUDA device; got {self.device}")
        if config.seed is not None:
            torch.manual_seed(config.seed)
        if config.init:
            init_seq2seq_weights(net)
        self.net = net.to(self.device)
        self.optimizer = make_adam(net, config.lr, self.device, config.betas, config.eps)
        if config.warmup_steps is not None:
            schedule = transformer_lr_lambda(config.num_hiddens, config.warmup_steps)
            scheduler = partial(torch.optim.lr_scheduler.LambdaLR, lr_lambda=schedule)
        self.scheduler = None if scheduler is None else scheduler(self.optimizer)
        self.loss = MaskedSoftmaxCELoss(config.label_smoothing, pad_index=tgt_vocab["<pad>"]
                                        if config.smoothing_skips_pad else None)
        self.bos, self.steps, self.snapshots = tgt_vocab["<bos>"], 0, []
        self.distributed = dist.is_available() and dist.is_initialized()
        self.rank = dist.get_rank() if self.distributed else 0
        self.model = net if not self.distributed else DistributedDataParallel(
            net, device_ids=[self.device] if self.device.type == "cuda" else None)

    def step(self, batch: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """One optimizer step on one batch; returns its ``(loss_sum, num_tokens)``."""
        self.steps += 1
        return seq2seq_step(self.model, batch, self.loss, self.optimizer, self.bos,
                            self.device, grad_clip=self.config.grad_clip,
                            scheduler=self.scheduler, amp=self.config.amp,
                            divisor=self._tokens_over_world if self.distributed else None)

    def epoch(self, data_iter: Iterable, epoch: int, total_steps: int = 0) -> torch.Tensor:
        """One pass over ``data_iter`` (its sampler told the epoch first, ``set_epoch``).
        Returns ``[loss_sum, num_tokens]`` (float64, summed over the ranks). Snapshots are
        taken when the run's ``total_steps`` is given."""
        for sampler in (getattr(data_iter, "batch_sampler", None),
                        getattr(data_iter, "sampler", None), data_iter):
            if hasattr(sampler, "set_epoch"):
                sampler.set_epoch(epoch)
        if self.config.seed is not None:  # dropout's draws depend on (seed, epoch, rank) only
            torch.manual_seed(int(np.random.SeedSequence((self.config.seed, epoch, self.rank))
                                  .generate_state(1)[0]))
        stats = torch.zeros(2, dtype=torch.float64 if self.device.type != "mps"
                            else torch.float32, device=self.device)
        self.model.train()
        with store_attention_weights(self.net, False):  # the fused attention kernel
            for batch in data_iter:
                loss_sum, num_tokens = self.step(batch)
                stats += torch.stack([loss_sum.to(stats.dtype), num_tokens.to(stats.dtype)])
                if total_steps:
                    self._snapshot(total_steps)
        if self.distributed:
            dist.all_reduce(stats)
        return stats

    def _snapshot(self, total_steps: int) -> None:
        """Keep the weights every ``snapshot_every`` of the steps, the last
        ``num_snapshots`` times (the last one after the final step)."""
        gap = max(int(total_steps * self.config.snapshot_every + 1e-9), 1)
        left = total_steps - self.steps
        if left % gap == 0 and left < self.config.num_snapshots * gap:
            self.snapshots.append({k: v.detach().clone() for k, v in self.net.state_dict()
                                   .items()})

    def fit(self, data_iter: Iterable, *, evaluate: Callable[[Trainer], Any] | None = None,
            on_epoch: Callable[[int, TrainResult], Any] | None = None,
            checkpointer: Any = None, resume: bool = True, max_seconds: float | None = None,
            log: Callable[[str], Any] | None = None) -> TrainResult:
        """Train ``config.num_epochs`` epochs over ``data_iter`` (batches ``(X, X_valid_len,
        Y, Y_valid_len)``). After each epoch: ``evaluate(self)`` (its value is kept in
        ``evaluations``; e.g. :meth:`estimate_loss` on dev batches), ``on_epoch(epoch,
        result)``, a line for ``log`` (on rank 0) and the ``checkpointer``'s save
        (:class:`d2lmini.Checkpointer`; with ``resume`` an existing checkpoint is continued).
        ``max_seconds`` stops after the epoch at which the next one would exceed it.
        """
        result, first, total_tokens = TrainResult(device=str(self.device)), 0, 0.0
        log = log if self.rank == 0 else None
        done = None if checkpointer is None or not resume else checkpointer.resume(
            self.net, self.optimizer, self.scheduler, self.device)
        if done is not None:
            first, result.losses = done[0], list(done[1])
            if log is not None:
                log(f"resumed from {checkpointer.path} after epoch {first}")
        total_steps = self.config.num_epochs * len(data_iter) if self.config.num_snapshots else 0
        num_epochs, timer = self.config.num_epochs, Timer()
        for epoch in range(first, num_epochs):
            loss_sum, num_tokens = self.epoch(data_iter, epoch, total_steps).tolist()
            seconds = timer.stop()  # evaluation, logging and checkpoints are not timed
            result.losses.append(loss_sum / max(num_tokens, 1))
            total_tokens += num_tokens
            if evaluate is not None:
                result.evaluations.append(evaluate(self))
            stop = max_seconds is not None and self._any_rank(
                timer.avg() * (epoch + 2 - first) > max_seconds)
            if log is not None:
                log(f"epoch {epoch + 1}/{num_epochs}: loss {result.losses[-1]:.4f}, "
                    f"{num_tokens / seconds:,.0f} tokens/s, {seconds:.1f} s"
                    + (" (time budget reached)" if stop and epoch + 1 < num_epochs else ""))
            if on_epoch is not None:
                on_epoch(epoch, result)
            if checkpointer is not None and checkpointer.due(epoch + 1, stop
                                                             or epoch + 1 == num_epochs):
                checkpointer.save(epoch + 1, self.net, self.optimizer, self.scheduler,
                                  result.losses)
            if stop:
                break
            timer.start()
        result.seconds, result.steps = timer.sum(), self.steps
        result.tokens_per_sec = total_tokens / max(result.seconds, 1e-9)
        if log is not None and result.losses:
            world = dist.get_world_size() if self.distributed else 1
            log(f"loss {result.losses[-1]:.3f}, {result.tokens_per_sec:.1f} tokens/sec on "
                f"{world} x {self.device.type}")
        if self.snapshots:
            result.num_snapshots = len(self.snapshots)
            result.averaged = average_checkpoints(self.snapshots)
        return result

    @torch.no_grad()
    def estimate_loss(self, data_iter: Iterable) -> float:
        """The mean loss per target token over ``data_iter`` without dropout and without
        training (nanoGPT's ``estimate_loss``): an ``evaluate`` hook for :meth:`fit`."""
        self.net.eval()
        stats = torch.zeros(2, dtype=torch.float64)
        with store_attention_weights(self.net, False):
            for batch in data_iter:
                loss_sum, num_tokens = teacher_forcing_loss(
                    self.net, batch, self.loss, self.bos, self.device, self.config.amp)
                stats += torch.stack([loss_sum.double().cpu(), num_tokens.double().cpu()])
        self.net.train()
        return float(stats[0] / max(float(stats[1]), 1.0))

    @staticmethod
    def _tokens_over_world(num_tokens: torch.Tensor) -> torch.Tensor:
        """What a rank divides its summed loss by under DDP: the global batch's number of
        target tokens over the world size (DDP then averages the gradients, which gives the
        gradient of the global batch's mean loss per token)."""
        total = num_tokens.clone()
        dist.all_reduce(total)
        return total / dist.get_world_size()

    def _any_rank(self, flag: bool) -> bool:
        """Whether ``flag`` holds on any rank (so that every rank stops at the same epoch)."""
        if not self.distributed:
            return flag
        flags = torch.tensor([float(flag)], device=self.device)
        dist.all_reduce(flags)
        return bool(flags.item())


class _Progress:

    """A live loss curve in notebooks and/or a progress bar in terminals."""

    def __init__(self, num_epochs: int, animate: bool | None, progress: bool | None) -> None:
        notebook = in_notebook()
        self.animator = self.bar = None
        self.refresh = max(1, num_epochs // 25)  # redraw the live plot about 25 times
        self.num_epochs = num_epochs
        if notebook if animate is None else animate:
            from .book.language import label
            from .plotting import Animator
            # the labels follow the edition's language ($D2LMINI_LANG), as every figure of the
            # book does; the loss is per target token, on a log scale
            self.animator = Animator(xlabel=label("epoch", "轮次"),
                                     ylabel=label("loss per token", "每词元损失"),
                                     xlim=[1, num_epochs], yscale="log")
        if (sys.stderr.isatty() and not notebook) if progress is None else progress:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=num_epochs, desc="train_seq2seq", unit="epoch")

    def epoch_done(self, epoch: int, loss: float) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{loss:.3f}")
        last = epoch + 1 == self.num_epochs
        if self.animator is not None and ((epoch + 1) % self.refresh == 0 or last):
            self.animator.add(epoch + 1, (loss,))
        if last and self.bar is not None:
            self.bar.close()


def train_seq2seq(net: nn.Module, data_iter: Iterable, lr: float, num_epochs: int,
                  tgt_vocab: Any, device: torch.device | str, *,
                  label_smoothing: float = 0.0, smoothing_skips_pad: bool = False,
                  grad_clip: float | None = 1.0,
                  scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
                  init: bool = True, animate: bool | None = None,
                  progress: bool | None = None) -> TrainResult:
    """Train a sequence-to-sequence model with teacher forcing.

    Xavier initialisation (``init=True``, :func:`init_seq2seq_weights`), Adam with learning
    rate ``lr``, masked cross-entropy (optionally label-smoothed; ``smoothing_skips_pad``
    puts no smoothing mass on ``<pad>``), gradient clipping to ``grad_clip``, and an
    optional ``scheduler`` factory (``lambda opt: LambdaLR(opt, ...)``, stepped per batch).
    It is a :class:`Trainer` with this :class:`TrainConfig`. The batches of ``data_iter`` are
    ``(X, X_valid_len, Y, Y_valid_len)`` with X ``(B, S)`` and Y ``(B, T)``.

    A live loss curve is drawn in notebooks (``animate``, default: in a notebook) and a
    progress bar in terminals (``progress``, default: when stderr is a terminal).
    Multi-head attention uses the fused kernel while training (no weights are stored).
    """
    config = TrainConfig(num_epochs=num_epochs, lr=lr, label_smoothing=label_smoothing,
                         smoothing_skips_pad=smoothing_skips_pad, grad_clip=grad_clip, init=init)
    trainer = Trainer(net, tgt_vocab, config, device, scheduler=scheduler)
    report = _Progress(num_epochs, animate, progress)
    result = trainer.fit(data_iter, on_epoch=lambda epoch, r: report.epoch_done(
        epoch, r.losses[-1]))
    print(f"loss {result.losses[-1]:.3f}, {result.tokens_per_sec:.1f} tokens/sec on "
          f"{trainer.device}")
    return result


def transformer_lr_lambda(num_hiddens: int, warmup_steps: int = 4000) -> Callable[[int], float]:
    """The paper's schedule ``d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)``, with
    ``num_hiddens`` the model's width d_model.

    Returns a function of the 0-based step for ``torch.optim.lr_scheduler.LambdaLR`` (with
    the optimizer's base learning rate 1.0); it counts steps from 1.

    Taught in :ref:`sec-training-translation-real`.
    """
    check_positive_int(num_hiddens, "num_hiddens")  # @check
    check_positive_int(warmup_steps, "warmup_steps")  # @check

    def lr_lambda(step: int) -> float:
        step += 1
        return num_hiddens ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)
    return lr_lambda


def average_checkpoints(state_dicts: Sequence[Mapping[str, torch.Tensor]]
                        ) -> dict[str, torch.Tensor]:
    """The element-wise mean of several checkpoints of one model (each a ``state_dict()``).

    The paper averages the last 5 checkpoints of its base models (written at 10-minute
    intervals) and the last 20 of its big ones; the mean of nearby points of one training run
    usually scores better than any of them. Floating-point tensors are averaged (in float64,
    then cast back to their dtype); other tensors (integer buffers, counters) are taken from the
    last checkpoint. Load the result with ``net.load_state_dict``.

    Raises:
        TypeError: ``state_dicts`` is not a sequence of mappings of tensors.
        ValueError: it is empty, or the checkpoints differ in their keys or shapes.

    Taught in :ref:`sec-training-translation-real`.
    """
    if isinstance(state_dicts, Mapping) or not isinstance(state_dicts, Sequence):  # @check
        raise TypeError("state_dicts must be a list of state_dicts; got "
                        f"{type(state_dicts).__name__}")
    if not state_dicts:  # @check
        raise ValueError("state_dicts must hold at least one checkpoint; got an empty list")
    for i, sd in enumerate(state_dicts):  # @check
        if not isinstance(sd, Mapping) or not all(isinstance(v, torch.Tensor)
                                                  for v in sd.values()):
            raise TypeError(f"state_dicts[{i}] must be a mapping of names to tensors "
                            f"(a state_dict); got {type(sd).__name__}")
    last = state_dicts[-1]
    for i, sd in enumerate(state_dicts):  # @check
        if set(sd) != set(last):
            raise ValueError(f"state_dicts[{i}] has other keys than the last checkpoint: "
                             f"{sorted(set(sd) ^ set(last))[:5]}")
        for key, value in sd.items():
            if value.shape != last[key].shape:
                raise ValueError(f"state_dicts[{i}][{key!r}] has shape {tuple(value.shape)}, "
                                 f"the last checkpoint {tuple(last[key].shape)}")
    averaged = {}
    for key, value in last.items():
        if value.is_floating_point():
            total = sum(sd[key].detach().double() for sd in state_dicts)
            averaged[key] = (total / len(state_dicts)).to(value.dtype)
        else:
            averaged[key] = value.detach().clone()
    return averaged
