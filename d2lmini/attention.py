"""Attention: masked softmax, additive and scaled dot-product attention, multi-head attention.

Shape conventions (d2l's): ``B`` batch size, ``Q`` number of queries, ``K`` number of
key-value pairs, ``h`` number of heads, ``d`` feature size, ``d_h = d / h`` the size of one
head. Multi-head attention keeps the heads as an axis of their own, ``(B, h, T, d_h)``: the
layout ``F.scaled_dot_product_attention`` and a decoder's key-value cache want.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .utils import check_bool

__all__ = [
    "lengths_to_mask",
    "masked_softmax",
    "AdditiveAttention",
    "DotProductAttention",
    "transpose_qkv",
    "transpose_output",
    "MultiHeadAttention",
    "store_attention_weights",
]


def lengths_to_mask(lengths: torch.Tensor, size: int) -> torch.Tensor:
    """Boolean mask that is True at the positions ``0 .. lengths - 1``.

    lengths of any shape ``(...)`` -> mask ``(..., size)``: ``mask[..., j] = j < lengths[...]``.
    The one place where valid lengths become a mask (masked softmax, attention, the loss).

    Taught in :ref:`sec-attention-pytorch-masked-softmax`.
    """
    return torch.arange(size, device=lengths.device) < lengths[..., None]


def masked_softmax(X: torch.Tensor, valid_lens: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis that ignores the keys beyond each valid length.

    Args:
        X: scores, shape ``(B, Q, K)``.
        valid_lens: ``None`` (no mask), shape ``(B,)`` (one length per example, shared by
            all its queries) or ``(B, Q)`` (one length per query). Query ``i`` of example
            ``b`` attends to keys ``0 .. valid_lens[b, i] - 1``.

    Returns:
        Weights of shape ``(B, Q, K)``. Masked positions get exactly 0; a row whose valid
        length is 0 gets all-zero weights (it attends to nothing) rather than uniform ones.

    Taught in :ref:`sec-attention-pytorch-masked-softmax`.
    """
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    B, Q, K = X.shape
    if valid_lens.shape not in ((B,), (B, Q)):  # @check
        raise ValueError(f"valid_lens must have shape ({B},) or ({B}, {Q}); got {valid_lens.shape}")
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None]  # (B, 1): broadcast over the queries
    keep = lengths_to_mask(valid_lens, K)  # (B, Q or 1, K)
    # The most negative finite number: exp(...) underflows to exactly 0 in every dtype.
    X = X.masked_fill(~keep, torch.finfo(X.dtype).min)
    # A row with nothing to keep comes out uniform; the product sets it to 0.
    return F.softmax(X, dim=-1) * keep


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention: ``a(q, k) = w_v^T tanh(W_q q + W_k k)``.

    Args:
        num_hiddens: size of the hidden layer of the scoring MLP.
        dropout: dropout probability applied to the attention weights.
        key_size, query_size: feature sizes of keys and queries; ``None`` infers them at the
            first call (lazy layers).

    forward: queries ``(B, Q, d_q)``, keys ``(B, K, d_k)``, values ``(B, K, d_v)``, valid_lens
    ``None``, ``(B,)`` or ``(B, Q)`` -> output ``(B, Q, d_v)``; ``self.attention_weights`` has
    shape ``(B, Q, K)``.

    Taught in :ref:`sec-attention-pytorch-additive`.
    """

    def __init__(self, num_hiddens: int, dropout: float, key_size: int | None = None,
                 query_size: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.W_k = (nn.LazyLinear(num_hiddens, bias=False) if key_size is None
                    else nn.Linear(key_size, num_hiddens, bias=False))
        self.W_q = (nn.LazyLinear(num_hiddens, bias=False) if query_size is None
                    else nn.Linear(query_size, num_hiddens, bias=False))
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights: torch.Tensor | None = None

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        queries, keys = self.W_q(queries), self.W_k(keys)
        # (B, Q, 1, h) + (B, 1, K, h) -> (B, Q, K, h): every query meets every key
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: ``softmax(Q K^T / sqrt(d)) V``.

    Args:
        dropout: dropout probability applied to the attention weights.

    forward: queries ``(B, Q, d)``, keys ``(B, K, d)``, values ``(B, K, d_v)``, valid_lens
    ``None``, ``(B,)`` or ``(B, Q)`` -> output ``(B, Q, d_v)``; ``self.attention_weights`` has
    shape ``(B, Q, K)``.

    Taught in :ref:`sec-attention-pytorch-scaled`.
    """

    def __init__(self, dropout: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights: torch.Tensor | None = None

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def transpose_qkv(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Fold the heads into the batch axis (d2l's layout):
    ``(B, T, num_hiddens)`` -> ``(B * num_heads, T, num_hiddens / num_heads)``.

    Taught in :ref:`sec-attention-pytorch-mha`.
    """
    # (B, T, h, d_h) -> (B, h, T, d_h) -> (B * h, T, d_h)
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1).permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Undo :func:`transpose_qkv`: ``(B * num_heads, T, d_h)`` -> ``(B, T, num_heads * d_h)``.

    Taught in :ref:`sec-attention-pytorch-mha`.
    """
    # (B * h, T, d_h) -> (B, h, T, d_h) -> (B, T, h, d_h) -> (B, T, h * d_h)
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with all heads computed in one batched operation.

    Args:
        num_hiddens: model width; queries, keys and values are projected to this size and
            split into ``num_heads`` heads of ``num_hiddens // num_heads`` features.
        num_heads: number of heads; must divide ``num_hiddens``.
        dropout: dropout probability on the attention weights.
        bias: whether the projections ``W_q, W_k, W_v, W_o`` have biases.
        store_attention_weights: ``False`` (the default) calls the fused
            ``F.scaled_dot_product_attention`` and stores nothing; ``True`` computes the
            weights explicitly (with :class:`DotProductAttention`) and stores them in
            ``self.attention_weights`` with shape ``(B, num_heads, Q, K)``, for plots
            (:class:`store_attention_weights` switches a whole model).
        query_size, key_size, value_size: input feature sizes (default ``num_hiddens``).

    ``forward`` projects and attends. A decoder calls the steps itself: ``project_qkv``
    (self-attention) or ``split_heads(W_q(...))`` and ``project_kv`` (cross-attention) give
    heads of shape ``(B, h, T, d_h)``, which it may cache, and ``attend`` finishes.

    Taught in :ref:`sec-attention-pytorch-mha`.
    """

    def __init__(self, num_hiddens: int, num_heads: int, dropout: float, bias: bool = False,
                 *, store_attention_weights: bool = False, query_size: int | None = None,
                 key_size: int | None = None, value_size: int | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if num_heads < 1 or num_hiddens % num_heads != 0:  # @check
            raise ValueError(f"num_heads must be a positive divisor of num_hiddens = "
                             f"{num_hiddens}; got {num_heads}")
        self.num_heads = num_heads
        self.store_attention_weights = store_attention_weights
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size or num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size or num_hiddens, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size or num_hiddens, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.attention_weights: torch.Tensor | None = None

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        """queries ``(B, Q, d_q)``, keys ``(B, K, d_k)``, values ``(B, K, d_v)``,
        valid_lens ``None``, ``(B,)`` or ``(B, Q)`` -> output ``(B, Q, num_hiddens)``."""
        if keys.shape[:2] != values.shape[:2] or queries.shape[0] != keys.shape[0]:  # @check
            raise ValueError(f"queries (B, Q, d_q), keys (B, K, d_k) and values (B, K, d_v) "
                             f"must agree on B and K; got {queries.shape}, {keys.shape}, "
                             f"{values.shape}")
        if queries is keys and keys is values:  # self-attention: project_qkv
            q, k, v = self.project_qkv(queries)
        else:
            q = self.split_heads(self.W_q(queries))
            k, v = self.project_kv(keys, values)
        return self.attend(q, k, v, valid_lens)

    def split_heads(self, X: torch.Tensor) -> torch.Tensor:
        """``(B, T, num_hiddens)`` -> ``(B, h, T, d_h)``: the heads as an axis of their own."""
        return X.unflatten(-1, (self.num_heads, -1)).transpose(1, 2)

    def project_qkv(self, X: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Self-attention's projections of X ``(B, T, d)``, in one matrix product when
        gradients are recorded: q, k, v of shape ``(B, h, T, d_h)`` each."""
        if not torch.is_grad_enabled():
            # Stacking the weights copies all three matrices. That pays for itself in
            # training (one product forward, one backward) but not when decoding one token at
            # a time, where the copy costs more than the two extra products it saves.
            return tuple(self.split_heads(W(X)) for W in (self.W_q, self.W_k, self.W_v))
        W = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
        b = (None if self.W_q.bias is None
             else torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias]))
        qkv = F.linear(X, W, b).unflatten(-1, (3, self.num_heads, -1))  # (B, T, 3, h, d_h)
        return qkv.permute(2, 0, 3, 1, 4).unbind(0)  # 3 x (B, h, T, d_h)

    def project_kv(self, keys: torch.Tensor,
                   values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Project keys ``(B, K, d_k)`` and values ``(B, K, d_v)`` and split them into heads:
        two tensors of shape ``(B, h, K, d_h)``. A decoder caches these."""
        return self.split_heads(self.W_k(keys)), self.split_heads(self.W_v(values))

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               valid_lens: torch.Tensor | None = None, is_causal: bool = False) -> torch.Tensor:
        """Attend with projected heads and apply ``W_o``.

        q ``(B, h, Q, d_h)``, k and v ``(B, h, K, d_h)``, valid_lens ``None``, ``(B,)`` or
        ``(B, Q)`` -> output ``(B, Q, num_hiddens)``. ``is_causal=True`` (with ``Q == K`` and
        no valid_lens) lets query ``i`` see keys ``0 .. i`` only.
        """
        B, h, Q, K = *q.shape[:3], k.shape[2]
        if self.store_attention_weights:  # the explicit path: (B * h, T, d_h), weights stored
            if is_causal:  # query i sees keys 0 .. i: valid lengths 1, 2, ..., Q
                valid_lens = torch.arange(1, Q + 1, device=q.device).expand(B, Q)
            if valid_lens is not None:  # one copy of the lengths per head: (B*h,) or (B*h, Q)
                valid_lens = torch.repeat_interleave(valid_lens, repeats=h, dim=0)
            output = self.attention(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1),
                                    valid_lens).unflatten(0, (B, h))
            self.attention_weights = self.attention.attention_weights.reshape(B, h, Q, K)
        else:  # the fused kernel; nothing stored
            mask = None
            if valid_lens is not None:  # one mask for all heads: (B, 1, 1, K) or (B, 1, Q, K)
                lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
                mask = lengths_to_mask(lens, K)[:, None]
            p = self.attention.dropout.p if self.training else 0.0
            output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p,
                                                    is_causal=is_causal)
            if mask is not None:  # a query with no valid key attends to nothing
                output = output.masked_fill(~mask.any(-1, keepdim=True), 0.0)
            self.attention_weights = None
        # (B, h, Q, d_h) -> (B, Q, h, d_h) -> (B, Q, h * d_h)
        return self.W_o(output.transpose(1, 2).flatten(2))


class store_attention_weights:
    """Switch every :class:`MultiHeadAttention` inside ``module`` to store (``flag=True``)
    or not store (``flag=False``: the fused kernel) its attention weights.

    Works as a plain call (the change stays) and as a context manager (the previous
    settings come back on exit)::

        with d2l.store_attention_weights(net):
            net(X, valid_lens)  # the weights are stored, for plotting
    """

    def __init__(self, module: nn.Module, flag: bool = True) -> None:
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module; got {type(module).__name__}")
        check_bool(flag, "flag")
        self._saved = [(m, m.store_attention_weights) for m in module.modules()
                       if isinstance(m, MultiHeadAttention)]
        for m, _ in self._saved:
            m.store_attention_weights = flag

    def __enter__(self) -> "store_attention_weights":
        return self

    def __exit__(self, *exc) -> None:
        for m, old in self._saved:
            m.store_attention_weights = old
