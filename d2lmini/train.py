"""Training sequence-to-sequence models: the masked loss, one teacher-forced training step,
the training loop, BLEU and the paper's learning-rate schedule. (Decoding is in
:mod:`d2lmini.decode`.)

Shapes: ``B`` sentences, ``S`` source steps, ``T`` target steps, ``V`` target vocabulary.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .attention import keep_attention_weights, lengths_to_mask
from .utils import Timer, check_positive_int, in_notebook

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
    "train_seq2seq",
    "transformer_lr_lambda",
    "average_checkpoints",
]


def sequence_mask(X: torch.Tensor, valid_len: torch.Tensor, value: float = 0) -> torch.Tensor:
    """Replace the entries of X ``(B, T, ...)`` at positions ``t >= valid_len[b]`` by
    ``value`` and return the result (a new tensor). valid_len has shape ``(B,)``.

    Taught in :ref:`sec-training-translation-loss`.
    """
    if X.dim() < 2 or valid_len.shape != X.shape[:1]:
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
        if not 0 <= label_smoothing < 1:
            raise ValueError(f"label_smoothing must be in [0, 1); got {label_smoothing!r}")
        super().__init__(reduction="none",
                         label_smoothing=label_smoothing if pad_index is None else 0.0)
        self.eps, self.pad_index = label_smoothing, pad_index

    def forward(self, pred: torch.Tensor, label: torch.Tensor,
                valid_len: torch.Tensor) -> torch.Tensor:
        if pred.dim() != 3 or label.shape != pred.shape[:2]:
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
    if not theta > 0:
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


def make_adam(net: nn.Module, lr: float, device: torch.device | str) -> torch.optim.Adam:
    """Adam over the parameters of ``net``; on CPU and CUDA PyTorch's fused implementation
    (one kernel updates every parameter instead of a dozen small operations per tensor; the
    same update rule)."""
    fused = torch.device(device).type in ("cpu", "cuda")
    return torch.optim.Adam(net.parameters(), lr=lr, fused=fused or None)


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
    """What :func:`train_seq2seq` and :func:`d2lmini.train_seq2seq_ddp` return."""

    losses: list[float] = field(default_factory=list)  #: mean loss per token, per epoch
    tokens_per_sec: float = 0.0  #: target tokens processed per second of training
    seconds: float = 0.0  #: wall-clock training time
    device: str = "cpu"


class _Progress:
    """A live loss curve in notebooks and/or a progress bar in terminals."""

    def __init__(self, num_epochs: int, animate: bool | None, progress: bool | None) -> None:
        notebook = in_notebook()
        self.animator = self.bar = None
        self.refresh = max(1, num_epochs // 25)  # redraw the live plot about 25 times
        self.num_epochs = num_epochs
        if notebook if animate is None else animate:
            from .plotting import Animator
            self.animator = Animator(xlabel="epoch", ylabel="loss", xlim=[1, num_epochs])
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
    Each step is :func:`seq2seq_step`. The batches of ``data_iter`` are
    ``(X, X_valid_len, Y, Y_valid_len)`` with X ``(B, S)`` and Y ``(B, T)``.

    A live loss curve is drawn in notebooks (``animate``, default: in a notebook) and a
    progress bar in terminals (``progress``, default: when stderr is a terminal).
    Multi-head attention uses the fused kernel while training (no weights are kept).
    """
    check_positive_int(num_epochs, "num_epochs")
    device = torch.device(device)
    if init:
        init_seq2seq_weights(net)
    net.to(device)
    optimizer = make_adam(net, lr, device)
    sched = scheduler(optimizer) if scheduler is not None else None
    loss = MaskedSoftmaxCELoss(label_smoothing,
                               pad_index=tgt_vocab["<pad>"] if smoothing_skips_pad else None)
    bos, report = tgt_vocab["<bos>"], _Progress(num_epochs, animate, progress)
    result, timer, total_tokens = TrainResult(device=str(device)), Timer(), 0
    net.train()
    with keep_attention_weights(net, False):
        for epoch in range(num_epochs):
            loss_sum, num_tokens = 0.0, 0
            for batch in data_iter:
                batch_loss, batch_tokens = seq2seq_step(
                    net, batch, loss, optimizer, bos, device, grad_clip=grad_clip,
                    scheduler=sched)
                loss_sum, num_tokens = loss_sum + float(batch_loss), num_tokens + int(batch_tokens)
            total_tokens += num_tokens
            result.losses.append(loss_sum / max(num_tokens, 1))
            report.epoch_done(epoch, result.losses[-1])
    result.seconds = timer.stop()
    result.tokens_per_sec = total_tokens / result.seconds
    print(f"loss {result.losses[-1]:.3f}, {result.tokens_per_sec:.1f} tokens/sec on {device}")
    return result


def transformer_lr_lambda(d_model: int, warmup_steps: int = 4000) -> Callable[[int], float]:
    """The paper's schedule ``d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)``.

    Returns a function of the 0-based step for ``torch.optim.lr_scheduler.LambdaLR`` (with
    the optimizer's base learning rate 1.0); it counts steps from 1.
    """
    check_positive_int(d_model, "d_model")
    check_positive_int(warmup_steps, "warmup_steps")

    def lr_lambda(step: int) -> float:
        step += 1
        return d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)
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
    """
    if isinstance(state_dicts, Mapping) or not isinstance(state_dicts, Sequence):
        raise TypeError("state_dicts must be a list of state_dicts; got "
                        f"{type(state_dicts).__name__}")
    if not state_dicts:
        raise ValueError("state_dicts must hold at least one checkpoint; got an empty list")
    for i, sd in enumerate(state_dicts):
        if not isinstance(sd, Mapping) or not all(isinstance(v, torch.Tensor)
                                                  for v in sd.values()):
            raise TypeError(f"state_dicts[{i}] must be a mapping of names to tensors "
                            f"(a state_dict); got {type(sd).__name__}")
    last = state_dicts[-1]
    for i, sd in enumerate(state_dicts):
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
