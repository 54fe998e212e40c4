"""The Transformer: positional encoding, its blocks, the encoder, the decoder with a KV cache.

Shapes: ``B`` batch size, ``T`` target steps in one call, ``S`` source steps, ``d`` =
``num_hiddens``, ``h`` heads, ``V`` vocabulary size.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
from torch import nn

from .attention import MultiHeadAttention, transpose_qkv

__all__ = [
    "PositionalEncoding",
    "PositionWiseFFN",
    "AddNorm",
    "EncoderBlock",
    "TransformerEncoder",
    "DecoderBlock",
    "TransformerDecoder",
    "EncoderDecoder",
    "transformer",
    "transformer_base",
    "num_parameters",
]


class PositionalEncoding(nn.Module):
    """Sinusoidal positional encoding of the paper, added to the input then dropout.

    ``P[pos, 2i] = sin(pos / 10000^(2i/d))`` and ``P[pos, 2i+1] = cos(pos / 10000^(2i/d))``
    for any ``d = num_hiddens`` (odd ``d`` too). ``self.P`` has shape ``(1, max_len, d)``.
    """

    def __init__(self, num_hiddens: int, dropout: float, max_len: int = 1000) -> None:
        super().__init__()
        if num_hiddens < 1 or max_len < 1:
            raise ValueError(
                f"num_hiddens and max_len must be positive; got {num_hiddens}, {max_len}"
            )
        self.dropout = nn.Dropout(dropout)
        pos = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1)  # (max_len, 1)
        freq = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32)
                         / num_hiddens)  # (ceil(d / 2),): one frequency per sin/cos pair
        P = torch.zeros((1, max_len, num_hiddens))
        P[:, :, 0::2] = torch.sin(pos / freq)
        P[:, :, 1::2] = torch.cos(pos / freq[: num_hiddens // 2])
        self.register_buffer("P", P, persistent=False)  # moves with .to(device)

    def forward(self, X: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """X ``(B, T, d)`` -> ``(B, T, d)``, adding the encodings of positions
        ``offset .. offset + T - 1`` (``offset`` > 0 when decoding step by step)."""
        if X.dim() != 3 or X.shape[-1] != self.P.shape[-1]:
            raise ValueError(
                f"X must have shape (batch_size, num_steps, {self.P.shape[-1]}); "
                f"got {tuple(X.shape)}"
            )
        if offset < 0 or offset + X.shape[1] > self.P.shape[1]:
            raise ValueError(
                f"positions {offset}..{offset + X.shape[1] - 1} exceed max_len = "
                f"{self.P.shape[1]}; build PositionalEncoding with a larger max_len"
            )
        return self.dropout(X + self.P[:, offset:offset + X.shape[1]].to(X.dtype))


class PositionWiseFFN(nn.Module):
    """Position-wise feed-forward network ``W_2 ReLU(W_1 x + b_1) + b_2``, applied to every
    position independently: ``(B, T, ffn_num_input)`` -> ``(B, T, ffn_num_outputs)``.

    ``ffn_num_input`` defaults to ``ffn_num_outputs`` (the Transformer's ``d_model``).
    """

    def __init__(self, ffn_num_hiddens: int, ffn_num_outputs: int,
                 ffn_num_input: int | None = None) -> None:
        super().__init__()
        self.dense1 = nn.Linear(ffn_num_input or ffn_num_outputs, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation: ``LayerNorm(X + dropout(Y))``.

    X and Y have the same shape ``(..., *norm_shape)``.
    """

    def __init__(self, norm_shape: int | tuple[int, ...], dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        if X.shape != Y.shape:
            raise ValueError(
                f"X and Y must have the same shape; got {tuple(X.shape)} and {tuple(Y.shape)}"
            )
        return self.ln(self.dropout(Y) + X)


def _sublayer(X: torch.Tensor, addnorm: AddNorm, fn: Callable[[torch.Tensor], torch.Tensor],
              norm_first: bool) -> torch.Tensor:
    """Post-LN ``LN(X + fn(X))`` (the paper) or pre-LN ``X + fn(LN(X))``."""
    if norm_first:
        return X + addnorm.dropout(fn(addnorm.ln(X)))
    return addnorm(X, fn(X))


class EncoderBlock(nn.Module):
    """One encoder layer: self-attention and a position-wise FFN, each wrapped in AddNorm.

    ``norm_first=False`` is the paper's post-LN; ``True`` normalises before each sub-layer.
    """

    def __init__(self, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, use_bias: bool = False, norm_first: bool = False) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X: torch.Tensor, valid_lens: torch.Tensor | None) -> torch.Tensor:
        """X ``(B, S, d)``, valid_lens ``(B,)`` or None -> ``(B, S, d)``."""
        Y = _sublayer(X, self.addnorm1, lambda Z: self.attention(Z, Z, Z, valid_lens),
                      self.norm_first)
        return _sublayer(Y, self.addnorm2, self.ffn, self.norm_first)


class TransformerEncoder(nn.Module):
    """The encoder: embedding scaled by ``sqrt(d)``, positional encoding, ``num_layers``
    encoder blocks (plus a final LayerNorm for pre-LN).

    forward: X ``(B, S)`` token ids, valid_lens ``(B,)`` -> ``(B, S, d)``.
    ``self.attention_weights``: per layer ``(B, h, S, S)`` (None when not kept).
    """

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int,
                 num_heads: int, num_layers: int, dropout: float, use_bias: bool = False,
                 *, norm_first: bool = False, max_len: int = 1000,
                 embedding: nn.Embedding | None = None) -> None:
        super().__init__()
        self.num_hiddens = num_hiddens
        if embedding is None:
            embedding = nn.Embedding(vocab_size, num_hiddens)
            # entries of size about 1/sqrt(d), as for the paper's shared embedding
            nn.init.normal_(embedding.weight, std=num_hiddens ** -0.5)
        self.embedding = embedding
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = nn.ModuleList([
            EncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias, norm_first)
            for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(num_hiddens) if norm_first else nn.Identity()
        self.attention_weights: list[torch.Tensor | None] = [None] * num_layers

    def forward(self, X: torch.Tensor, valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        if X.dim() != 2:
            raise ValueError(f"X must have shape (batch_size, num_steps); got {tuple(X.shape)}")
        # The embedding's entries are about 1/sqrt(d); scaling by sqrt(d) puts them on
        # the same scale as the positional encoding in [-1, 1].
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention_weights
        return self.final_norm(X)


class DecoderBlock(nn.Module):
    """The ``i``-th decoder layer: masked self-attention, encoder-decoder attention and an
    FFN, each wrapped in AddNorm.

    forward(X ``(B, T, d)``, state) -> ``(B, T, d)``, updating ``state`` in place: the
    projected self-attention keys and values of this layer grow by ``T`` positions.
    """

    def __init__(self, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, i: int, use_bias: bool = False,
                 norm_first: bool = False) -> None:
        super().__init__()
        self.i = i
        self.norm_first = norm_first
        self.attention1 = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def self_attention(self, X: torch.Tensor, state: dict[str, Any]) -> torch.Tensor:
        """Masked self-attention of the new positions X ``(B, T, d)`` over every position
        seen so far, using and extending the cache of projected keys and values."""
        B, T, _ = X.shape
        att = self.attention1
        k, v = att.project_kv(X, X)  # (B * h, T, d_h) each: only the new positions
        if state["self_kv"][self.i] is not None:
            k_old, v_old = state["self_kv"][self.i]
            k, v = torch.cat([k_old, k], dim=1), torch.cat([v_old, v], dim=1)
        state["self_kv"][self.i] = (k, v)
        q = transpose_qkv(att.W_q(X), att.num_heads)
        # Causal mask: new position j (absolute t0 + j) sees keys 0 .. t0 + j.
        # One new position sees the whole cache, so it needs no mask.
        dec_valid_lens = None
        if T > 1:
            t0 = state["num_steps"]
            dec_valid_lens = torch.arange(t0 + 1, t0 + T + 1, device=X.device).repeat(B, 1)
        return att.attend(q, k, v, dec_valid_lens)

    def cross_attention(self, X: torch.Tensor, state: dict[str, Any]) -> torch.Tensor:
        """Attention of X ``(B, T, d)`` over the encoder outputs, whose projected keys and
        values ``state['cross_kv'][i]`` were computed once by ``init_state``."""
        att = self.attention2
        k, v = state["cross_kv"][self.i]
        q = transpose_qkv(att.W_q(X), att.num_heads)
        return att.attend(q, k, v, state["enc_valid_lens"])

    def forward(self, X: torch.Tensor, state: dict[str, Any]) -> torch.Tensor:
        X = _sublayer(X, self.addnorm1, lambda Z: self.self_attention(Z, state),
                      self.norm_first)
        X = _sublayer(X, self.addnorm2, lambda Z: self.cross_attention(Z, state),
                      self.norm_first)
        return _sublayer(X, self.addnorm3, self.ffn, self.norm_first)


class TransformerDecoder(nn.Module):
    """The decoder, with a cache of projected keys and values for incremental decoding.

    ``init_state(enc_outputs, enc_valid_lens)`` returns a fresh state. ``forward(X, state)``
    takes the *next* ``T`` target tokens X ``(B, T)`` after those the state has already seen
    and returns logits ``(B, T, V)`` and the state. Feeding a whole target at once (training)
    and feeding it one token at a time (prediction) give the same logits in eval mode.

    ``self.attention_weights``: per layer a pair ``(self_w (B, h, T, t), cross_w (B, h, T,
    S))`` from the last call, where ``t`` counts every position seen; None when not kept.
    ``tie_output=True`` makes the output projection share the embedding's weight matrix.
    """

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int,
                 num_heads: int, num_layers: int, dropout: float, use_bias: bool = False,
                 *, norm_first: bool = False, max_len: int = 1000,
                 embedding: nn.Embedding | None = None, tie_output: bool = False) -> None:
        super().__init__()
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        if embedding is None:
            embedding = nn.Embedding(vocab_size, num_hiddens)
            # entries of size about 1/sqrt(d), as for the paper's shared embedding
            nn.init.normal_(embedding.weight, std=num_hiddens ** -0.5)
        self.embedding = embedding
        self.pos_encoding = PositionalEncoding(num_hiddens, dropout, max_len)
        self.blks = nn.ModuleList([
            DecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i, use_bias,
                         norm_first) for i in range(num_layers)])
        self.final_norm = nn.LayerNorm(num_hiddens) if norm_first else nn.Identity()
        self.dense = nn.Linear(num_hiddens, vocab_size)
        if tie_output:
            self.dense.weight = self.embedding.weight
        self.attention_weights: list[tuple[Any, Any]] = [(None, None)] * num_layers

    def init_state(self, enc_outputs: torch.Tensor,
                   enc_valid_lens: torch.Tensor | None = None) -> dict[str, Any]:
        """enc_outputs ``(B, S, d)``, enc_valid_lens ``(B,)`` or None -> a fresh state:
        the projected cross-attention keys/values of every layer, an empty self-attention
        cache and the number of target positions seen (0)."""
        if enc_outputs.dim() != 3 or enc_outputs.shape[-1] != self.num_hiddens:
            raise ValueError(
                f"enc_outputs must have shape (batch_size, num_steps, {self.num_hiddens}); "
                f"got {tuple(enc_outputs.shape)}"
            )
        cross_kv = [blk.attention2.project_kv(enc_outputs, enc_outputs) for blk in self.blks]
        return {"enc_valid_lens": enc_valid_lens, "cross_kv": cross_kv,
                "self_kv": [None] * self.num_layers, "num_steps": 0}

    def forward(self, X: torch.Tensor,
                state: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
        if X.dim() != 2:
            raise ValueError(f"X must have shape (batch_size, num_steps); got {tuple(X.shape)}")
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens),
                              offset=state["num_steps"])
        for i, blk in enumerate(self.blks):
            X = blk(X, state)
            self.attention_weights[i] = (blk.attention1.attention_weights,
                                         blk.attention2.attention_weights)
        state["num_steps"] += X.shape[1]
        return self.dense(self.final_norm(X)), state

    def reorder_state(self, state: dict[str, Any], index: torch.Tensor) -> dict[str, Any]:
        """Select (and repeat) batch entries of a state, e.g. to follow beams in beam search:
        entry ``b`` of the new state is entry ``index[b]`` of the old one."""
        h = self.blks[0].attention1.num_heads if len(self.blks) else 1
        # cached keys/values are laid out as (B * h, t, d_h): pick every head of each entry
        index_h = (index[:, None] * h + torch.arange(h, device=index.device)).reshape(-1)

        def pick(kv):
            return None if kv is None else (kv[0].index_select(0, index_h),
                                             kv[1].index_select(0, index_h))
        lens = state["enc_valid_lens"]
        return {"enc_valid_lens": None if lens is None else lens.index_select(0, index),
                "cross_kv": [pick(kv) for kv in state["cross_kv"]],
                "self_kv": [pick(kv) for kv in state["self_kv"]],
                "num_steps": state["num_steps"]}


class EncoderDecoder(nn.Module):
    """Encoder-decoder wrapper (d2l's ``EncoderDecoder``).

    forward(enc_X ``(B, S)``, dec_X ``(B, T)``, enc_valid_lens ``(B,)``) ->
    (logits ``(B, T, V)``, decoder state).
    """

    def __init__(self, encoder: nn.Module, decoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X: torch.Tensor, dec_X: torch.Tensor,
                enc_valid_lens: torch.Tensor | None = None) -> tuple[torch.Tensor, Any]:
        enc_outputs = self.encoder(enc_X, enc_valid_lens)
        dec_state = self.decoder.init_state(enc_outputs, enc_valid_lens)
        return self.decoder(dec_X, dec_state)


def transformer(src_vocab_size: int, tgt_vocab_size: int, num_hiddens: int = 512,
                ffn_num_hiddens: int = 2048, num_heads: int = 8, num_layers: int = 6,
                dropout: float = 0.1, *, use_bias: bool = False, norm_first: bool = False,
                share_embeddings: bool = False, tie_output: bool = False,
                max_len: int = 1000) -> EncoderDecoder:
    """Build an encoder-decoder Transformer.

    ``share_embeddings=True`` uses one embedding matrix for source and target (the paper's
    shared vocabulary; needs ``src_vocab_size == tgt_vocab_size``); ``tie_output=True``
    makes the decoder's output projection reuse the target embedding matrix.
    """
    if share_embeddings and src_vocab_size != tgt_vocab_size:
        raise ValueError(
            "share_embeddings needs one shared vocabulary: src_vocab_size must equal "
            f"tgt_vocab_size; got {src_vocab_size} and {tgt_vocab_size}"
        )
    encoder = TransformerEncoder(src_vocab_size, num_hiddens, ffn_num_hiddens, num_heads,
                                 num_layers, dropout, use_bias, norm_first=norm_first,
                                 max_len=max_len)
    tgt_emb = encoder.embedding if share_embeddings else None
    decoder = TransformerDecoder(tgt_vocab_size, num_hiddens, ffn_num_hiddens, num_heads,
                                 num_layers, dropout, use_bias, norm_first=norm_first,
                                 max_len=max_len, embedding=tgt_emb, tie_output=tie_output)
    return EncoderDecoder(encoder, decoder)


def transformer_base(vocab_size: int = 37000, **kwargs: Any) -> EncoderDecoder:
    """The paper's base model: N = 6, d_model = 512, d_ff = 2048, h = 8, P_drop = 0.1, one
    shared vocabulary (37,000 BPE tokens for WMT English-German) with the embeddings and
    the output projection tied. Keyword arguments override these settings."""
    settings = dict(num_hiddens=512, ffn_num_hiddens=2048, num_heads=8, num_layers=6,
                    dropout=0.1, share_embeddings=True, tie_output=True)
    settings.update(kwargs)
    return transformer(vocab_size, vocab_size, **settings)


def num_parameters(module: nn.Module) -> int:
    """Number of distinct parameters of ``module`` (a shared tensor is counted once)."""
    return sum(p.numel() for p in module.parameters())
