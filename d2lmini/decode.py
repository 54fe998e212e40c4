"""Decoding with a trained encoder-decoder: batched greedy search, batched beam search, the
d2l-style ``predict_seq2seq`` for one sentence and ``translate`` for many.

Every function here drives the decoder's key-value cache one position at a time. Shapes:
``B`` sentences, ``S`` source steps, ``k`` beams, ``V`` target vocabulary size, ``L`` output
steps. A *maximum output length* counts decoding steps, ``<eos>`` included: a sentence that has
not ended after ``max_len`` steps is cut there.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import torch
from torch import nn

from .attention import store_attention_weights
from .data import build_array_nmt, preprocess_nmt
from .utils import check_number, check_positive_int

__all__ = ["Decoded", "length_penalty", "greedy_search", "beam_search",
           "predict_seq2seq", "translate"]

LengthPenalty = Callable[[torch.Tensor], torch.Tensor]


class Decoded(NamedTuple):
    """What the decoders return for a batch of B sentences.

    ``tokens`` ``(B, L)`` int64 and ``lengths`` ``(B,)``: sentence ``b``'s output is
    ``tokens[b, :lengths[b]]`` (``<eos>`` excluded; the rest of the row is ``<eos>``).
    ``scores`` ``(B,)``: beam search's length-normalised log-probability of each output
    (None for greedy search).

    Taught in :ref:`sec-training-translation-predict`.
    """

    tokens: torch.Tensor
    lengths: torch.Tensor
    scores: torch.Tensor | None = None

    def to_lists(self) -> list[list[int]]:
        """The outputs as lists of token ids, without ``<eos>``."""
        return [row[:n] for row, n in zip(self.tokens.tolist(), self.lengths.tolist())]


def length_penalty(kind: str | None = "gnmt", alpha: float = 0.6) -> LengthPenalty:
    """The length normalisation of beam search, a function of the output lengths ``|Y|``.

    ``'gnmt'``: ``((5 + |Y|) / 6) ** alpha`` (Wu et al., 2016; the Transformer paper uses
    alpha = 0.6); ``'d2l'``: ``|Y| ** alpha`` (d2l's beam search, alpha = 0.75); ``None``: 1,
    the raw log-probability. A hypothesis is ranked by ``log P(Y) / lp(|Y|)``, where ``|Y|``
    counts ``<eos>``.

    Taught in :ref:`sec-training-translation-beam`.
    """
    if kind not in ("gnmt", "d2l", None):  # @check
        raise ValueError(f"length_penalty kind must be 'gnmt', 'd2l' or None; got {kind!r}")
    check_number(alpha, "alpha", minimum=0)  # @check
    if kind == "gnmt":
        return lambda n: ((5 + n.double()) / 6) ** alpha
    if kind == "d2l":
        return lambda n: n.double().clamp(min=1) ** alpha
    return lambda n: torch.ones_like(n, dtype=torch.float64)


@contextlib.contextmanager
def _inference(net: nn.Module) -> Iterator[None]:
    """Eval mode (no dropout) and no autograd inside; the module's mode comes back after.

    Taught in :ref:`sec-training-translation-predict`.
    """
    was_training = net.training
    net.eval()
    try:
        with torch.inference_mode():
            yield
    finally:
        net.train(was_training)


def _max_lens(max_len: int | torch.Tensor, batch_size: int,
              device: torch.device) -> torch.Tensor:
    """One maximum output length per sentence, ``(B,)`` int64.

    Taught in :ref:`sec-training-translation-predict`.
    """
    if isinstance(max_len, torch.Tensor):
        if max_len.shape != (batch_size,) or int(max_len.min()) < 1:  # @check
            raise ValueError(f"max_len must be a positive int or a tensor of {batch_size} "
                             f"positive lengths; got shape {tuple(max_len.shape)}")
        return max_len.to(device=device, dtype=torch.long)
    check_positive_int(max_len, "max_len")  # @check
    return torch.full((batch_size,), max_len, device=device)


def _start(net: nn.Module, src: torch.Tensor, src_valid_len: torch.Tensor | None,
           reserve: int) -> Any:
    """Encode a batch and return the decoder's initial state. Columns beyond the longest
    source hold only padding and are cut first; without padding no mask is needed.

    Taught in :ref:`sec-training-translation-predict`.
    """
    if src.dim() != 2:  # @check
        raise ValueError(f"src must have shape (batch_size, num_steps); got {tuple(src.shape)}")
    if src_valid_len is not None:
        if src_valid_len.shape != src.shape[:1]:  # @check
            raise ValueError(f"src_valid_len must have shape ({src.shape[0]},); "
                             f"got {tuple(src_valid_len.shape)}")
        width = max(int(src_valid_len.max()), 1)
        src = src[:, :width]
        if bool((src_valid_len >= width).all()):
            src_valid_len = None
    enc_outputs = net.encoder(src, src_valid_len)
    return net.decoder.init_state(enc_outputs, src_valid_len, reserve)


def greedy_search(net: nn.Module, src: torch.Tensor, src_valid_len: torch.Tensor | None, *,
                  bos: int, eos: int | None, max_len: int | torch.Tensor,
                  use_cache: bool = True,
                  on_step: Callable[[torch.Tensor], Any] | None = None) -> Decoded:
    """Greedy decoding of a batch: at every step each sentence takes its most likely token.

    Args:
        net: an encoder-decoder (``net.encoder(X, valid_len)``, ``net.decoder.init_state``,
            ``net.decoder(X, state) -> (logits, state)``); run in eval mode under
            ``torch.inference_mode``, its mode is restored afterwards.
        src: source token ids ``(B, S)``; src_valid_len ``(B,)`` or None (no padding).
        bos, eos: the ids of ``<bos>`` and ``<eos>``; ``eos=None`` never stops early (it
            decodes exactly ``max_len`` tokens, as the benchmarks do).
        max_len: maximum number of steps, an int or one per sentence ``(B,)``.
        use_cache: False reruns the decoder on the whole prefix at every step with an
            empty self-attention cache (the slow way, for comparison; same tokens).
        on_step: called after every step with that step's tokens ``(B,)``.

    Returns:
        :class:`Decoded`. Decoding stops when every sentence has ended.

    Taught in :ref:`sec-training-translation-predict`.
    """
    B, device = src.shape[0], src.device
    limits = _max_lens(max_len, B, device)
    steps = int(limits.max())
    tokens = torch.full((B, steps), -1 if eos is None else eos, dtype=torch.long,
                        device=device)
    lengths = limits.clone()  # lowered to the position of <eos> where one comes
    with _inference(net):
        state = _start(net, src, src_valid_len, steps if use_cache else 0)
        dec_X = torch.full((B, 1), bos, dtype=torch.long, device=device)
        for t in range(steps):
            if use_cache:  # only the newest token: the cache holds the others
                logits, state = net.decoder(dec_X, state)
            else:  # every token so far, through an empty cache
                prefix = torch.cat([torch.full_like(dec_X, bos), tokens[:, :t]], dim=1)
                logits, _ = net.decoder(prefix, state.fresh())
            dec_X = logits[:, -1:].argmax(dim=-1)  # (B, 1): the next input
            tokens[:, t] = dec_X[:, 0]
            if on_step is not None:
                on_step(dec_X[:, 0])
            if eos is not None:
                ended = (dec_X[:, 0] == eos) & (lengths > t)
                lengths = torch.where(ended, t, lengths)
                if bool((lengths <= t + 1).all()):  # every sentence has ended or is cut
                    tokens = tokens[:, :t + 1]
                    break
    if eos is not None:  # after its end, a row holds <eos>
        tokens = tokens.masked_fill(torch.arange(tokens.shape[1], device=device)
                                    >= lengths[:, None], eos)
    return Decoded(tokens, lengths)


class _Beams:
    """The bookkeeping of batched beam search for the sentences still being decoded.

    Taught in :ref:`sec-training-translation-beam`.
    """

    def __init__(self, B: int, k: int, steps: int, eos: int, device: torch.device) -> None:
        self.k, self.eos = k, eos
        self.rows = torch.arange(B, device=device)  # original index of each live sentence
        self.raw = torch.full((B, k), -math.inf, dtype=torch.float64, device=device)
        self.raw[:, 0] = 0.0  # the first step extends one empty hypothesis per sentence
        self.seqs = torch.empty((B, k, 0), dtype=torch.long, device=device)
        self.num_done = torch.zeros(B, dtype=torch.long, device=device)  # finished hyps.
        self.best = torch.full((B,), -math.inf, dtype=torch.float64, device=device)
        self.best_tokens = torch.full((B, steps), eos, dtype=torch.long, device=device)
        self.best_lengths = torch.zeros(B, dtype=torch.long, device=device)

    def finish(self, mask: torch.Tensor, scores: torch.Tensor, seqs: torch.Tensor) -> None:
        """Offer hypotheses ``seqs`` ``(n, m, t)`` with normalised ``scores`` ``(n, m)`` where
        ``mask`` ``(n, m)``; keep each sentence's best."""
        scores = scores.masked_fill(~mask, -math.inf)
        top, j = scores.max(dim=1)
        better = top > self.best[self.rows]
        rows, t = self.rows[better], seqs.shape[2]
        self.best[rows] = top[better]
        self.best_tokens[rows, :t] = seqs[better, j[better]]
        self.best_lengths[rows] = t

    def step(self, logp: torch.Tensor, t: int, penalty: LengthPenalty,
             limits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Extend the beams with the log-probabilities ``logp`` ``(n, k, V)`` of step ``t``.

        Returns the parent beam of each new beam ``(n, k)`` and the sentences that are
        done ``(n,)`` (k finished hypotheses, or out of steps)."""
        n, k, V = logp.shape
        cand = (self.raw[:, :, None] + logp).reshape(n, k * V)
        top, idx = cand.topk(2 * k, dim=1)  # (n, 2k): enough for k that do not end
        parent, token = idx // V, idx % V
        is_eos = token == self.eos
        ends = is_eos & torch.isfinite(top)
        ends[:, k:] = False  # only the k best candidates may finish, as in fairseq
        length = torch.full_like(self.num_done, t + 1)
        self.finish(ends, top / penalty(length)[:, None],
                    self.seqs.gather(1, parent[:, :, None].expand(-1, -1, t)))
        self.num_done += ends.sum(dim=1)
        # the k best candidates that do not end go on (at most k of the 2k end with <eos>)
        keep = (~is_eos).double().argsort(dim=1, descending=True, stable=True)[:, :k]
        parent, token = parent.gather(1, keep), token.gather(1, keep)
        self.raw = top.gather(1, keep)
        self.seqs = torch.cat([self.seqs.gather(1, parent[:, :, None].expand(-1, -1, t)),
                               token[:, :, None]], dim=2)
        cut = limits[self.rows] <= t + 1  # out of steps: the live beams end here, as they are
        if bool(cut.any()):
            self.finish(cut[:, None] & torch.isfinite(self.raw),
                        self.raw / penalty(length)[:, None], self.seqs)
        return parent, (self.num_done >= k) | cut

    def keep(self, alive: torch.Tensor) -> None:
        """Drop the sentences that are done."""
        self.rows, self.raw, self.seqs = self.rows[alive], self.raw[alive], self.seqs[alive]
        self.num_done = self.num_done[alive]


def beam_search(net: nn.Module, src: torch.Tensor, src_valid_len: torch.Tensor | None, *,
                bos: int, eos: int, max_len: int | torch.Tensor, beam_size: int = 4,
                alpha: float = 0.6, penalty: str | None = "gnmt") -> Decoded:
    """Batched beam search with length normalisation.

    Every sentence keeps ``beam_size`` hypotheses. At each step the 2 ``beam_size`` best
    extensions of a sentence's hypotheses are ranked by their log-probability; those of the
    first ``beam_size`` that end with ``<eos>`` are finished and scored by
    ``log P(Y) / lp(|Y|)`` (see :func:`length_penalty`; ``penalty='gnmt'`` with the paper's
    ``alpha = 0.6`` by default, ``'d2l'`` for ``|Y| ** alpha``), the best ``beam_size`` of the
    others go on. A sentence is done when ``beam_size`` hypotheses have finished or after
    ``max_len`` steps (its live hypotheses are then scored as they are); decoding stops when
    every sentence is done, and done sentences leave the batch. With ``beam_size=1`` this is
    greedy search.

    Args and the model's requirements as for :func:`greedy_search` (the decoder state must
    have ``select``).

    Returns:
        :class:`Decoded` with each sentence's best hypothesis and its score.

    Taught in :ref:`sec-training-translation-beam`.
    """
    check_positive_int(beam_size, "beam_size")  # @check
    k = beam_size
    lp = length_penalty(penalty, alpha)
    B, device = src.shape[0], src.device
    limits = _max_lens(max_len, B, device)
    steps = int(limits.max())
    beams = _Beams(B, k, steps, eos, device)
    with _inference(net):
        state = _start(net, src, src_valid_len, steps)
        state = state.select(torch.arange(B, device=device).repeat_interleave(k))  # (B*k, ...)
        dec_X = torch.full((B * k, 1), bos, dtype=torch.long, device=device)
        for t in range(steps):
            logits, state = net.decoder(dec_X, state)
            logp = torch.log_softmax(logits[:, -1].double(), dim=-1)
            parent, done = beams.step(logp.reshape(-1, k, logp.shape[-1]), t, lp, limits)
            index = (torch.arange(len(parent), device=device)[:, None] * k + parent)
            if bool(done.all()):
                break
            if bool(done.any()):  # done sentences leave the batch
                beams.keep(~done)
                state = state.select(index[~done].reshape(-1))
            else:  # the beams of a sentence share its source: reorder the cache only
                state = state.select(index.reshape(-1), source=False)
            dec_X = beams.seqs[:, :, -1].reshape(-1, 1)
    L = max(int(beams.best_lengths.max()), 1)
    return Decoded(beams.best_tokens[:, :L], beams.best_lengths, beams.best)


def predict_seq2seq(net: nn.Module, src_sentence: str, src_vocab: Any, tgt_vocab: Any,
                    num_steps: int, device: torch.device | str,
                    save_attention_weights: bool = False, *, beam_size: int = 1,
                    alpha: float = 0.75, penalty: str | None = "d2l",
                    sep: str = " ") -> tuple[str, list]:
    """Translate one sentence (d2l's ``predict_seq2seq``): encode, decode, join the tokens.

    The sentence is preprocessed like the training data (:func:`d2lmini.preprocess_nmt`),
    ended with ``<eos>`` and cut or padded to ``num_steps`` (:func:`d2lmini.build_array_nmt`);
    at most ``num_steps`` tokens are generated. Greedy search when ``beam_size == 1``, else
    :func:`beam_search` ranking finished hypotheses by ``log P / |Y| ** alpha`` (d2l's
    normalisation; ``penalty='gnmt'`` for the paper's). Target tokens are joined with ``sep``
    (``''`` for character-level Chinese).

    Returns ``(translation, attention_weight_seq)``: with ``save_attention_weights`` (greedy
    only) the list holds, for each generated token, the decoder's ``attention_weights``
    (per layer ``(self_w, cross_w)``); the encoder's weights are in
    ``net.encoder.attention_weights``.
    """
    check_positive_int(beam_size, "beam_size")
    if save_attention_weights and beam_size > 1:
        raise ValueError("save_attention_weights is only supported with beam_size=1")
    X, X_valid_len = build_array_nmt([preprocess_nmt(src_sentence).split()], src_vocab,
                                     num_steps)
    X, X_valid_len = X.to(device), X_valid_len.to(device)
    bos, eos = tgt_vocab["<bos>"], tgt_vocab["<eos>"]
    weights: list = []
    def record(_):  # one entry per generated token: per layer (self_w, cross_w)
        weights.append(list(net.decoder.attention_weights))

    with store_attention_weights(net, save_attention_weights):
        if beam_size == 1:
            out = greedy_search(net, X, X_valid_len, bos=bos, eos=eos, max_len=num_steps,
                                on_step=record if save_attention_weights else None)
        else:
            out = beam_search(net, X, X_valid_len, bos=bos, eos=eos, max_len=num_steps,
                              beam_size=beam_size, alpha=alpha, penalty=penalty)
    return sep.join(tgt_vocab.to_tokens(out.to_lists()[0])), weights


def translate(net: nn.Module, sources: Sequence[Sequence[str]], src_vocab: Any,
              tgt_vocab: Any, num_steps: int, device: torch.device | str, *,
              batch_size: int = 256, beam_size: int = 1,
              max_len: int | Callable[[torch.Tensor], torch.Tensor] | None = None,
              alpha: float = 0.6, penalty: str | None = "gnmt",
              amp: bool = False) -> list[list[str]]:
    """Translate many tokenised sentences, ``batch_size`` at a time; token lists out.

    Sources are encoded as :func:`predict_seq2seq` encodes one (``<eos>``, cut or padded to
    ``num_steps``) and sorted by length so that a batch holds sentences of similar length
    (the result keeps the input order). ``max_len``: an int, or a function of the source
    valid lengths ``(B,)`` (the paper's ``lambda n: n + 50``); None: ``num_steps``. Greedy
    search with ``beam_size=1`` (then the result equals ``predict_seq2seq``'s), else
    :func:`beam_search` with ``alpha`` and ``penalty``. ``amp``: bfloat16 autocast (CUDA).
    """
    check_positive_int(batch_size, "batch_size")
    X, X_valid_len = build_array_nmt(sources, src_vocab, num_steps)  # (N, S), (N,)
    order = torch.argsort(X_valid_len, stable=True)
    bos, eos = tgt_vocab["<bos>"], tgt_vocab["<eos>"]
    autocast = (torch.autocast(device_type="cuda", dtype=torch.bfloat16) if amp
                else contextlib.nullcontext())
    out: list[list[str] | None] = [None] * len(sources)
    with store_attention_weights(net, False), autocast:
        for i in range(0, len(order), batch_size):
            rows = order[i:i + batch_size]
            x, x_len = X[rows].to(device), X_valid_len[rows].to(device)
            limit = (num_steps if max_len is None else
                     max_len(x_len) if callable(max_len) else max_len)
            if beam_size == 1:
                decoded = greedy_search(net, x, x_len, bos=bos, eos=eos, max_len=limit)
            else:
                decoded = beam_search(net, x, x_len, bos=bos, eos=eos, max_len=limit,
                                      beam_size=beam_size, alpha=alpha, penalty=penalty)
            for row, ids in zip(rows.tolist(), decoded.to_lists()):
                out[row] = tgt_vocab.to_tokens(ids)
    return out
