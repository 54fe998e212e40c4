"""Attention: masked softmax, additive and scaled dot-product attention, multi-head attention.

Shape conventions (d2l's): ``B`` batch size, ``Q`` number of queries, ``K`` number of
key-value pairs, ``h`` number of heads, ``d`` feature size.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "masked_softmax",
    "AdditiveAttention",
    "DotProductAttention",
    "transpose_qkv",
    "transpose_output",
    "MultiHeadAttention",
    "keep_attention_weights",
]


def _check_valid_lens(valid_lens: torch.Tensor | None, B: int, Q: int) -> None:
    """Raise ``ValueError`` unless ``valid_lens`` is None, (B,) or (B, Q)."""
    if valid_lens is None:
        return
    if not isinstance(valid_lens, torch.Tensor):
        raise ValueError(
            f"valid_lens must be a tensor of shape ({B},) or ({B}, {Q}); "
            f"got {type(valid_lens).__name__}"
        )
    if tuple(valid_lens.shape) not in ((B,), (B, Q)):
        raise ValueError(
            f"valid_lens must have shape (batch_size,) = ({B},) or "
            f"(batch_size, num_queries) = ({B}, {Q}); got {tuple(valid_lens.shape)}"
        )


def _check_ndim(name: str, X: torch.Tensor, ndim: int, shape: str) -> None:
    if not isinstance(X, torch.Tensor) or X.dim() != ndim:
        got = tuple(X.shape) if isinstance(X, torch.Tensor) else type(X).__name__
        raise ValueError(f"{name} must have shape {shape}; got {got}")


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
    """
    _check_ndim("X", X, 3, "(batch_size, num_queries, num_keys)")
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    B, Q, K = X.shape
    _check_valid_lens(valid_lens, B, Q)
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None]  # (B, 1): broadcast over the queries
    keep = torch.arange(K, device=X.device) < valid_lens[..., None]  # (B, Q or 1, K)
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
        """queries ``(B, Q, d_q)``, keys ``(B, K, d_k)``, values ``(B, K, d_v)``,
        valid_lens ``None``, ``(B,)`` or ``(B, Q)`` -> output ``(B, Q, d_v)``;
        ``self.attention_weights`` has shape ``(B, Q, K)``."""
        _check_qkv(queries, keys, values, same_dim=False)
        queries, keys = self.W_q(queries), self.W_k(keys)
        # (B, Q, 1, h) + (B, 1, K, h) -> (B, Q, K, h): every query meets every key
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)  # (B, Q, K)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def _check_qkv(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
               same_dim: bool) -> None:
    _check_ndim("queries", queries, 3, "(batch_size, num_queries, d)")
    _check_ndim("keys", keys, 3, "(batch_size, num_keys, d)")
    _check_ndim("values", values, 3, "(batch_size, num_keys, d_v)")
    if not (queries.shape[0] == keys.shape[0] == values.shape[0]):
        raise ValueError(
            "queries, keys and values must share the batch size; got "
            f"{tuple(queries.shape)}, {tuple(keys.shape)}, {tuple(values.shape)}"
        )
    if keys.shape[1] != values.shape[1]:
        raise ValueError(
            "keys and values must have the same number of positions (dim 1); got "
            f"keys {tuple(keys.shape)} and values {tuple(values.shape)}"
        )
    if same_dim and queries.shape[-1] != keys.shape[-1]:
        raise ValueError(
            "queries and keys must have the same feature size d for a dot product; got "
            f"queries {tuple(queries.shape)} and keys {tuple(keys.shape)}"
        )


class DotProductAttention(nn.Module):
    """Scaled dot-product attention: ``softmax(Q K^T / sqrt(d)) V``.

    Args:
        dropout: dropout probability applied to the attention weights.
    """

    def __init__(self, dropout: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self.dropout = nn.Dropout(dropout)
        self.attention_weights: torch.Tensor | None = None

    def forward(self, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        """queries ``(B, Q, d)``, keys ``(B, K, d)``, values ``(B, K, d_v)``,
        valid_lens ``None``, ``(B,)`` or ``(B, Q)`` -> output ``(B, Q, d_v)``;
        ``self.attention_weights`` has shape ``(B, Q, K)``."""
        _check_qkv(queries, keys, values, same_dim=True)
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def transpose_qkv(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Split the last axis into heads: ``(B, T, num_hiddens)`` ->
    ``(B * num_heads, T, num_hiddens / num_heads)``."""
    _check_ndim("X", X, 3, "(batch_size, num_steps, num_hiddens)")
    if X.shape[-1] % num_heads != 0:
        raise ValueError(
            f"X.shape[-1] = {X.shape[-1]} must be divisible by num_heads = {num_heads}"
        )
    # (B, T, h, d_h) -> (B, h, T, d_h) -> (B * h, T, d_h)
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1).permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Undo :func:`transpose_qkv`: ``(B * num_heads, T, d_h)`` -> ``(B, T, num_heads * d_h)``."""
    _check_ndim("X", X, 3, "(batch_size * num_heads, num_steps, head_size)")
    if X.shape[0] % num_heads != 0:
        raise ValueError(
            f"X.shape[0] = {X.shape[0]} must be divisible by num_heads = {num_heads}"
        )
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
        keep_weights: ``True`` computes the weights explicitly and keeps them in
            ``self.attention_weights`` with shape ``(B, num_heads, Q, K)`` (for plotting);
            ``False`` calls the fused ``F.scaled_dot_product_attention`` and keeps nothing.
        query_size, key_size, value_size: input feature sizes (default ``num_hiddens``).
    """

    def __init__(self, num_hiddens: int, num_heads: int, dropout: float, bias: bool = False,
                 *, keep_weights: bool = True, query_size: int | None = None,
                 key_size: int | None = None, value_size: int | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if num_heads < 1 or num_hiddens % num_heads != 0:
            raise ValueError(
                f"num_heads must be a positive divisor of num_hiddens; got num_heads="
                f"{num_heads}, num_hiddens={num_hiddens}"
            )
        self.num_heads = num_heads
        self.keep_weights = keep_weights
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
        _check_qkv(queries, keys, values, same_dim=False)
        if queries is keys and keys is values:  # self-attention: one fused projection
            W = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
            b = (None if self.W_q.bias is None else
                 torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias]))
            q, k, v = F.linear(queries, W, b).chunk(3, dim=-1)
            q, k, v = (transpose_qkv(t, self.num_heads) for t in (q, k, v))
        else:
            q = transpose_qkv(self.W_q(queries), self.num_heads)
            k, v = self.project_kv(keys, values)
        return self.attend(q, k, v, valid_lens)

    def project_kv(self, keys: torch.Tensor,
                   values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Project and split keys ``(B, K, d_k)`` and values ``(B, K, d_v)`` into heads:
        two tensors of shape ``(B * num_heads, K, d_h)``. A decoder caches these."""
        if keys is values:  # one matmul for both projections
            W = torch.cat([self.W_k.weight, self.W_v.weight])
            b = None if self.W_k.bias is None else torch.cat([self.W_k.bias, self.W_v.bias])
            k, v = F.linear(keys, W, b).chunk(2, dim=-1)
        else:
            k, v = self.W_k(keys), self.W_v(values)
        return transpose_qkv(k, self.num_heads), transpose_qkv(v, self.num_heads)

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        """Attend with already projected heads and apply ``W_o``.

        q ``(B * h, Q, d_h)``, k and v ``(B * h, K, d_h)``, valid_lens ``None``, ``(B,)``
        or ``(B, Q)`` -> output ``(B, Q, num_hiddens)``.
        """
        h = self.num_heads
        B, Q, K = q.shape[0] // h, q.shape[1], k.shape[1]
        _check_valid_lens(valid_lens, B, Q)
        if self.keep_weights:
            if valid_lens is not None:  # one copy of the lengths per head: (B*h,) or (B*h, Q)
                valid_lens = torch.repeat_interleave(valid_lens, repeats=h, dim=0)
            output = self.attention(q, k, v, valid_lens)
            self.attention_weights = self.attention.attention_weights.reshape(B, h, Q, K)
        else:
            mask = None
            if valid_lens is not None:  # one mask for all heads: (B, 1, 1, K) or (B, 1, Q, K)
                lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
                mask = (torch.arange(K, device=q.device) < lens[..., None])[:, None]
            # Heads as their own axis, (B, h, T, d_h): SDPA picks its fast kernels only for
            # 4-D inputs (3-D ones get the reference "math" kernel).
            q, k, v = (t.reshape(B, h, t.shape[1], t.shape[2]) for t in (q, k, v))
            p = self.attention.dropout.p if self.training else 0.0
            output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            if mask is not None:  # a query with no valid key attends to nothing
                output = output.masked_fill(~mask.any(-1, keepdim=True), 0.0)
            output = output.reshape(B * h, Q, output.shape[-1])
            self.attention_weights = None
        return self.W_o(transpose_output(output, h))


class keep_attention_weights:
    """Switch every :class:`MultiHeadAttention` inside ``module`` to keep (``flag=True``) or
    drop (``flag=False``) its attention weights.

    Works as a plain call (the change stays) and as a context manager (the previous
    settings come back on exit)::

        with d2l.keep_attention_weights(net):
            net(X, valid_lens)  # weights are kept for plotting
    """

    def __init__(self, module: nn.Module, flag: bool = True) -> None:
        if not isinstance(module, nn.Module):
            raise ValueError(f"module must be a torch.nn.Module; got {type(module).__name__}")
        self._saved = [(m, m.keep_weights) for m in module.modules()
                       if isinstance(m, MultiHeadAttention)]
        for m, _ in self._saved:
            m.keep_weights = flag

    def __enter__(self) -> "keep_attention_weights":
        return self

    def __exit__(self, *exc) -> None:
        for m, old in self._saved:
            m.keep_weights = old
