"""The Transformer: positional encoding, its blocks, the encoder, the decoder with a KV cache.

Shapes: ``B`` batch size, ``T`` target steps in one call, ``S`` source steps, ``d`` =
``num_hiddens``, ``h`` heads, ``V`` vocabulary size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

from .attention import MultiHeadAttention
from .utils import check_bool, check_non_negative_int, check_number, check_positive_int

__all__ = [
    "PositionalEncoding",
    "PositionWiseFFN",
    "AddNorm",
    "SublayerConnection",
    "EncoderBlock",
    "TransformerEncoder",
    "DecoderState",
    "DecoderBlock",
    "TransformerDecoder",
    "EncoderDecoder",
    "TransformerConfig",
    "make_transformer",
    "transformer_base",
    "num_parameters",
]


@dataclass
class TransformerConfig:
    """The hyperparameters of an encoder-decoder Transformer, shared by its parts: every block,
    the encoder and the decoder take one (nanoGPT's ``Block(config)``), and ``build()`` makes
    the whole model.

    ``num_hiddens`` is the paper's d_model, ``ffn_num_hiddens`` its d_ff, ``num_heads`` its h,
    ``num_layers`` its N and ``dropout`` its P_drop; ``bias`` gives the attention projections
    biases; ``norm_first=True`` is pre-LN. The vocabulary sizes are needed by the encoder
    (``src_vocab_size``), the decoder (``tgt_vocab_size``) and ``build()``, not by a block.
    ``share_embeddings=True`` uses one embedding matrix for source and target (the paper's
    shared vocabulary; needs equal sizes); ``tie_output=True`` makes the decoder's output
    projection reuse the target embedding matrix; ``max_len`` bounds the positions of the
    positional encoding.

    Taught in :ref:`sec-transformer-blocks-encoder`.
    """

    src_vocab_size: int | None = None
    tgt_vocab_size: int | None = None
    num_hiddens: int = 512
    ffn_num_hiddens: int = 2048
    num_heads: int = 8
    num_layers: int = 6
    dropout: float = 0.1
    bias: bool = False
    norm_first: bool = False
    share_embeddings: bool = False
    tie_output: bool = False
    max_len: int = 1000

    def __post_init__(self) -> None:  # @check
        for name in ("src_vocab_size", "tgt_vocab_size"):
            if getattr(self, name) is not None:
                check_positive_int(getattr(self, name), name)
        for name in ("num_hiddens", "ffn_num_hiddens", "num_heads", "max_len"):
            check_positive_int(getattr(self, name), name)
        check_non_negative_int(self.num_layers, "num_layers")
        if self.num_hiddens % self.num_heads:
            raise ValueError(f"num_heads must divide num_hiddens = {self.num_hiddens}; "
                             f"got {self.num_heads}")
        check_number(self.dropout, "dropout", minimum=0, below=1)
        for name in ("bias", "norm_first", "share_embeddings", "tie_output"):
            check_bool(getattr(self, name), name)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError("share_embeddings needs one shared vocabulary: src_vocab_size must "
                             f"equal tgt_vocab_size; got {self.src_vocab_size} and "
                             f"{self.tgt_vocab_size}")

    def vocab_size(self, side: str) -> int:
        """``src_vocab_size`` (``side='src'``) or ``tgt_vocab_size`` (``'tgt'``), which must
        be set."""
        size = getattr(self, f"{side}_vocab_size")
        if size is None:  # @check
            raise ValueError(f"{side}_vocab_size must be set to build the "
                             f"{'encoder' if side == 'src' else 'decoder'}; got None")
        return size

    def build(self) -> EncoderDecoder:
        """A freshly initialised :class:`EncoderDecoder` with these settings; the config is
        kept as its ``config`` attribute."""
        encoder = TransformerEncoder(self)
        decoder = TransformerDecoder(
            self, embedding=encoder.embedding if self.share_embeddings else None)
        net = EncoderDecoder(encoder, decoder)
        net.config = self
        return net


class PositionalEncoding(nn.Module):
    """Sinusoidal positional encoding of the paper, added to the input then dropout.

    ``P[pos, 2i] = sin(pos / 10000^(2i/d))`` and ``P[pos, 2i+1] = cos(pos / 10000^(2i/d))``
    for any ``d = num_hiddens`` (odd ``d`` too). ``self.P`` has shape ``(1, max_len, d)``,
    float32: the table is computed in float64 and rounded once, so every entry is within half a
    float32 unit of the exact value on every machine, whatever the accuracy of the float32
    ``sin``/``cos`` kernels there (they are not correctly rounded and differ between CPUs).

    Taught in :ref:`sec-embeddings-pe-sinusoid`.
    """

    def __init__(self, num_hiddens: int, dropout: float, max_len: int = 1000) -> None:
        super().__init__()
        check_positive_int(num_hiddens, "num_hiddens")
        check_positive_int(max_len, "max_len")
        self.dropout = nn.Dropout(dropout)
        f64 = torch.float64
        pos = torch.arange(max_len, dtype=f64).reshape(-1, 1)  # (max_len, 1)
        freq = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=f64)
                         / num_hiddens)  # (ceil(d / 2),): one frequency per sin/cos pair
        P = torch.zeros((1, max_len, num_hiddens), dtype=f64)
        P[:, :, 0::2] = torch.sin(pos / freq)
        P[:, :, 1::2] = torch.cos(pos / freq[: num_hiddens // 2])
        self.register_buffer("P", P.float(), persistent=False)  # moves with .to(device)

    def forward(self, X: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """X ``(B, T, d)`` -> ``(B, T, d)``, adding the encodings of positions
        ``offset .. offset + T - 1`` (``offset`` > 0 when decoding step by step)."""
        return self.dropout(X + self.P[:, offset:offset + X.shape[1]].to(X.dtype))


class PositionWiseFFN(nn.Module):
    """Position-wise feed-forward network ``W_2 ReLU(W_1 x + b_1) + b_2``, applied to every
    position independently: ``(B, T, ffn_num_input)`` -> ``(B, T, ffn_num_outputs)``.

    ``ffn_num_input`` defaults to ``ffn_num_outputs`` (the Transformer's ``d_model``).

    Taught in :ref:`sec-transformer-blocks-ffn`.
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

    Taught in :ref:`sec-transformer-blocks-addnorm`.
    """

    def __init__(self, norm_shape: int | tuple[int, ...], dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return self.ln(self.dropout(Y) + X)


class SublayerConnection(nn.Module):
    """A sub-layer inside a residual connection with layer normalisation.

    ``forward(X, sublayer)``, with X ``(..., d)`` and ``sublayer`` a function from
    ``(..., d)`` to ``(..., d)``, returns the paper's post-LN ``AddNorm(X, sublayer(X))`` =
    ``LN(X + dropout(sublayer(X)))`` (``norm_first=False``) or the pre-LN
    ``X + dropout(sublayer(LN(X)))`` (``norm_first=True``).

    Taught in :ref:`sec-transformer-blocks-encoder`.
    """

    def __init__(self, num_hiddens: int, dropout: float, norm_first: bool = False) -> None:
        super().__init__()
        self.norm_first = norm_first
        if norm_first:
            self.ln, self.dropout = nn.LayerNorm(num_hiddens), nn.Dropout(dropout)
        else:
            self.addnorm = AddNorm(num_hiddens, dropout)

    def forward(self, X: torch.Tensor,
                sublayer: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        if self.norm_first:  # pre-LN: the residual stream itself is never normalised
            return X + self.dropout(sublayer(self.ln(X)))
        return self.addnorm(X, sublayer(X))  # post-LN, the paper's order


class EncoderBlock(nn.Module):
    """One encoder layer: self-attention and a position-wise FFN, each inside a
    :class:`SublayerConnection` (``norm_first=False``: the paper's post-LN).

    forward: X ``(B, S, d)``, valid_lens ``(B,)`` or None -> ``(B, S, d)``.

    Taught in :ref:`sec-transformer-blocks-encoder`.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.attention = MultiHeadAttention(c.num_hiddens, c.num_heads, c.dropout, c.bias)
        self.residual1 = SublayerConnection(c.num_hiddens, c.dropout, c.norm_first)
        self.ffn = PositionWiseFFN(c.ffn_num_hiddens, c.num_hiddens)
        self.residual2 = SublayerConnection(c.num_hiddens, c.dropout, c.norm_first)

    def forward(self, X: torch.Tensor, valid_lens: torch.Tensor | None) -> torch.Tensor:
        X = self.residual1(X, lambda Z: self.attention(Z, Z, Z, valid_lens))
        return self.residual2(X, self.ffn)


class TransformerEncoder(nn.Module):
    """The encoder: embedding scaled by ``sqrt(d)``, positional encoding, ``num_layers``
    encoder blocks (plus a final LayerNorm for pre-LN).

    forward: X ``(B, S)`` token ids, valid_lens ``(B,)`` (or one length per query,
    ``(B, S)``) or None -> ``(B, S, d)``.
    ``self.attention_weights``: per layer ``(B, h, S, S)`` (None unless stored:
    :class:`d2lmini.store_attention_weights`).

    Taught in :ref:`sec-transformer-blocks-encoder`.
    """

    def __init__(self, config: TransformerConfig, *,
                 embedding: nn.Embedding | None = None) -> None:
        super().__init__()
        c = config
        self.num_hiddens = c.num_hiddens
        if embedding is None:
            embedding = nn.Embedding(c.vocab_size("src"), c.num_hiddens)
            # entries of size about 1/sqrt(d), as for the paper's shared embedding
            nn.init.normal_(embedding.weight, std=c.num_hiddens ** -0.5)
        self.embedding = embedding
        self.pos_encoding = PositionalEncoding(c.num_hiddens, c.dropout, c.max_len)
        self.blks = nn.ModuleList([EncoderBlock(c) for _ in range(c.num_layers)])
        self.final_norm = nn.LayerNorm(c.num_hiddens) if c.norm_first else nn.Identity()

    @property
    def attention_weights(self) -> list[torch.Tensor | None]:
        return [blk.attention.attention_weights for blk in self.blks]

    def forward(self, X: torch.Tensor, valid_lens: torch.Tensor | None = None) -> torch.Tensor:
        max_len = self.pos_encoding.P.shape[1]
        if X.dim() != 2 or X.shape[1] > max_len:  # @check
            raise ValueError(f"X must have shape (batch_size, num_steps <= {max_len}); "
                             f"got {tuple(X.shape)}")
        if valid_lens is not None and valid_lens.shape not in (X.shape[:1], X.shape[:2]):  # @check
            raise ValueError(f"valid_lens must have shape {tuple(X.shape[:1])} or "
                             f"{tuple(X.shape[:2])}; got {tuple(valid_lens.shape)}")
        # The embedding's entries are about 1/sqrt(d); scaling by sqrt(d) puts them on
        # the same scale as the positional encoding in [-1, 1].
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        for blk in self.blks:
            X = blk(X, valid_lens)
        return self.final_norm(X)


@dataclass
class DecoderState:
    """What a :class:`TransformerDecoder` remembers between calls, for a batch of B sentences.

    Keys and values are stored with the heads as an axis, ``(B, h, length, d_h)``.

    Attributes:
        cross_kv: per layer, the projected keys and values of the encoder outputs for the
            encoder-decoder attention, ``(B, h, S, d_h)`` each (computed once).
        enc_valid_lens: ``(B,)`` valid lengths of the source, or None (no padding).
        self_kv: per layer, the self-attention cache: keys and values of every target
            position decoded so far, in buffers ``(B, h, capacity, d_h)`` whose first
            ``offset`` positions are filled; None before the layer's first call.
        offset: the number of target positions already decoded (the position of the next).
        reserve: the capacity to allocate when a cache is first written step by step (a
            decoder that knows its maximum output length reserves it); when a buffer is full
            it is replaced by one twice as large.

    Taught in :ref:`sec-transformer-blocks-decoder`.
    """

    cross_kv: list[tuple[torch.Tensor, torch.Tensor]]
    enc_valid_lens: torch.Tensor | None = None
    self_kv: list[tuple[torch.Tensor, torch.Tensor] | None] = field(default_factory=list)
    offset: int = 0
    reserve: int = 0

    @property
    def batch_size(self) -> int:
        return self.cross_kv[0][0].shape[0]

    def update_self_kv(self, layer_idx: int, k: torch.Tensor,
                       v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store the keys and values ``(B, h, T, d_h)`` of the T new positions at positions
        ``offset .. offset + T - 1`` of layer ``layer_idx``'s cache; return the keys and
        values of every position so far, ``(B, h, offset + T, d_h)`` each."""
        start, end = self.offset, self.offset + k.shape[2]
        cache = self.self_kv[layer_idx]
        if cache is None and end >= self.reserve:  # e.g. training: the whole target at once
            self.self_kv[layer_idx] = (k, v)
            return k, v
        if cache is None or cache[0].shape[2] < end:  # no room: a bigger buffer
            size = max(end, self.reserve, 2 * start)
            new = tuple(t.new_empty(t.shape[0], t.shape[1], size, t.shape[3]) for t in (k, v))
            if cache is not None:
                for buffer, old in zip(new, cache):
                    buffer[:, :, :start] = old[:, :, :start]
            cache = self.self_kv[layer_idx] = new
        cache[0][:, :, start:end] = k
        cache[1][:, :, start:end] = v
        return cache[0][:, :, :end], cache[1][:, :, :end]

    def fresh(self) -> "DecoderState":
        """The same source, with an empty self-attention cache and ``offset`` 0."""
        return DecoderState(self.cross_kv, self.enc_valid_lens, [None] * len(self.self_kv),
                            0, self.reserve)

    def select(self, index: torch.Tensor, *, source: bool = True) -> "DecoderState":
        """A state whose entry ``b`` is entry ``index[b]`` of this one (entries may repeat).

        Beam search follows its beams with it. Only the filled positions of the caches are
        copied. ``source=False`` leaves ``cross_kv`` and ``enc_valid_lens`` as they are:
        right when ``index`` only permutes entries that share their source sentence (the
        beams of one sentence), and it saves copying them.
        """
        def rows(buffer):  # the entries of a cache buffer, its capacity kept
            out = buffer.new_empty((len(index),) + buffer.shape[1:])
            out[:, :, :self.offset] = buffer[:, :, :self.offset].index_select(0, index)
            return out
        self_kv = [None if kv is None else (rows(kv[0]), rows(kv[1])) for kv in self.self_kv]
        if not source:
            return DecoderState(self.cross_kv, self.enc_valid_lens, self_kv, self.offset,
                                self.reserve)
        cross_kv = [(k.index_select(0, index), v.index_select(0, index)) for k, v in self.cross_kv]
        lens = self.enc_valid_lens
        return DecoderState(cross_kv, None if lens is None else lens.index_select(0, index),
                            self_kv, self.offset, self.reserve)


class DecoderBlock(nn.Module):
    """Decoder layer number ``layer_idx``: masked self-attention, encoder-decoder attention
    and an FFN, each inside a :class:`SublayerConnection`.

    forward(X ``(B, T, d)``, state) -> ``(B, T, d)``: the T new positions after the
    ``state.offset`` already decoded; the layer's self-attention cache in ``state`` grows by T.

    Taught in :ref:`sec-transformer-blocks-decoder`.
    """

    def __init__(self, config: TransformerConfig, layer_idx: int) -> None:
        super().__init__()
        c, self.layer_idx = config, layer_idx
        self.attention1 = MultiHeadAttention(c.num_hiddens, c.num_heads, c.dropout, c.bias)
        self.residual1 = SublayerConnection(c.num_hiddens, c.dropout, c.norm_first)
        self.attention2 = MultiHeadAttention(c.num_hiddens, c.num_heads, c.dropout, c.bias)
        self.residual2 = SublayerConnection(c.num_hiddens, c.dropout, c.norm_first)
        self.ffn = PositionWiseFFN(c.ffn_num_hiddens, c.num_hiddens)
        self.residual3 = SublayerConnection(c.num_hiddens, c.dropout, c.norm_first)

    def self_attention(self, X: torch.Tensor, state: DecoderState) -> torch.Tensor:
        """Masked self-attention of the new positions X ``(B, T, d)`` over every position
        decoded so far, through the cache of projected keys and values."""
        q, k, v = self.attention1.project_qkv(X)  # (B, h, T, d_h): the new positions only
        k, v = state.update_self_kv(self.layer_idx, k, v)  # (B, h, offset + T, d_h)
        T, t0 = X.shape[1], state.offset
        if T == 1:  # one new position may see the whole cache: no mask
            return self.attention1.attend(q, k, v)
        if t0 == 0:  # a whole target at once (training): query i sees keys 0 .. i
            return self.attention1.attend(q, k, v, is_causal=True)
        # new position j (absolute t0 + j) sees keys 0 .. t0 + j
        lens = torch.arange(t0 + 1, t0 + T + 1, device=X.device).expand(X.shape[0], T)
        return self.attention1.attend(q, k, v, lens)

    def cross_attention(self, X: torch.Tensor, state: DecoderState) -> torch.Tensor:
        """Attention of X ``(B, T, d)`` over the encoder outputs, whose projected keys and
        values ``state.cross_kv[layer_idx]`` were computed once by ``init_state``."""
        q = self.attention2.split_heads(self.attention2.W_q(X))  # (B, h, T, d_h)
        k, v = state.cross_kv[self.layer_idx]  # (B, h, S, d_h)
        return self.attention2.attend(q, k, v, state.enc_valid_lens)

    def forward(self, X: torch.Tensor, state: DecoderState) -> torch.Tensor:
        X = self.residual1(X, lambda Z: self.self_attention(Z, state))
        X = self.residual2(X, lambda Z: self.cross_attention(Z, state))
        return self.residual3(X, self.ffn)


class TransformerDecoder(nn.Module):
    """The decoder, with a cache of projected keys and values for incremental decoding.

    ``init_state(enc_outputs, enc_valid_lens)`` returns a fresh :class:`DecoderState`.
    ``forward(X, state)`` takes the *next* ``T`` target tokens X ``(B, T)`` after the
    ``state.offset`` ones the state has already seen and returns logits ``(B, T, V)`` and the
    state. Feeding a whole target at once (training) and feeding it one token at a time
    (prediction) give the same logits in eval mode.

    ``self.attention_weights``: per layer a pair ``(self_w (B, h, T, t), cross_w (B, h, T,
    S))`` from the last call, where ``t`` counts every position seen; None when not stored.
    ``tie_output=True`` makes the output projection share the embedding's weight matrix.

    Taught in :ref:`sec-transformer-blocks-decoder`.
    """

    def __init__(self, config: TransformerConfig, *,
                 embedding: nn.Embedding | None = None) -> None:
        super().__init__()
        c, vocab_size = config, config.vocab_size("tgt")
        self.num_hiddens, self.num_layers = c.num_hiddens, c.num_layers
        if embedding is None:
            embedding = nn.Embedding(vocab_size, c.num_hiddens)
            # entries of size about 1/sqrt(d), as for the paper's shared embedding
            nn.init.normal_(embedding.weight, std=c.num_hiddens ** -0.5)
        self.embedding = embedding
        self.pos_encoding = PositionalEncoding(c.num_hiddens, c.dropout, c.max_len)
        self.blks = nn.ModuleList([DecoderBlock(c, i) for i in range(c.num_layers)])
        self.final_norm = nn.LayerNorm(c.num_hiddens) if c.norm_first else nn.Identity()
        self.dense = nn.Linear(c.num_hiddens, vocab_size)
        if c.tie_output:
            self.dense.weight = self.embedding.weight

    @property
    def attention_weights(self) -> list[tuple[torch.Tensor | None, torch.Tensor | None]]:
        return [(blk.attention1.attention_weights, blk.attention2.attention_weights)
                for blk in self.blks]

    def init_state(self, enc_outputs: torch.Tensor, enc_valid_lens: torch.Tensor | None = None,
                   reserve: int = 0) -> DecoderState:
        """enc_outputs ``(B, S, d)``, enc_valid_lens ``(B,)`` or None -> a fresh state: the
        projected cross-attention keys and values of every layer, an empty self-attention
        cache (``reserve``: target positions to allocate room for when decoding step by
        step) and ``offset`` 0."""
        if enc_outputs.dim() != 3 or enc_outputs.shape[-1] != self.num_hiddens:  # @check
            raise ValueError(f"enc_outputs must have shape (batch_size, num_steps, "
                             f"{self.num_hiddens}); got {tuple(enc_outputs.shape)}")
        if enc_valid_lens is not None and enc_valid_lens.shape != enc_outputs.shape[:1]:  # @check
            raise ValueError(f"enc_valid_lens must have shape ({enc_outputs.shape[0]},); "
                             f"got {tuple(enc_valid_lens.shape)}")
        cross_kv = [blk.attention2.project_kv(enc_outputs, enc_outputs) for blk in self.blks]
        return DecoderState(cross_kv, enc_valid_lens, [None] * self.num_layers, 0, reserve)

    def forward(self, X: torch.Tensor,
                state: DecoderState) -> tuple[torch.Tensor, DecoderState]:
        room = self.pos_encoding.P.shape[1] - state.offset  # positions left before max_len
        if X.dim() != 2 or X.shape[1] > room:  # @check
            raise ValueError(f"X must have shape (batch_size, T <= max_len - offset = {room});"
                             f" got {tuple(X.shape)}")
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens), state.offset)
        for blk in self.blks:
            X = blk(X, state)
        state.offset += X.shape[1]
        return self.dense(self.final_norm(X)), state


class EncoderDecoder(nn.Module):
    """Encoder-decoder wrapper (d2l's ``EncoderDecoder``).

    forward(enc_X ``(B, S)``, dec_X ``(B, T)``, enc_valid_lens ``(B,)``) ->
    (logits ``(B, T, V)``, decoder state).

    Taught in :ref:`sec-transformer-blocks-full`.
    """

    def __init__(self, encoder: nn.Module, decoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X: torch.Tensor, dec_X: torch.Tensor,
                enc_valid_lens: torch.Tensor | None = None) -> tuple[torch.Tensor, Any]:
        if enc_X.shape[0] != dec_X.shape[0]:  # @check
            raise ValueError(f"enc_X and dec_X must have the same batch size; got "
                             f"{tuple(enc_X.shape)} and {tuple(dec_X.shape)}")
        enc_outputs = self.encoder(enc_X, enc_valid_lens)
        dec_state = self.decoder.init_state(enc_outputs, enc_valid_lens)
        return self.decoder(dec_X, dec_state)


def make_transformer(src_vocab_size: int, tgt_vocab_size: int, num_hiddens: int = 512,
                     ffn_num_hiddens: int = 2048, num_heads: int = 8, num_layers: int = 6,
                     dropout: float = 0.1, **options: Any) -> EncoderDecoder:
    """Build an encoder-decoder Transformer: ``TransformerConfig(...).build()``.

    The keyword ``options`` are the remaining fields of :class:`TransformerConfig`
    (``bias``, ``norm_first``, ``share_embeddings``, ``tie_output``, ``max_len``).
    """
    return TransformerConfig(src_vocab_size, tgt_vocab_size, num_hiddens, ffn_num_hiddens,
                             num_heads, num_layers, dropout, **options).build()


def transformer_base(vocab_size: int = 37000, **overrides: Any) -> TransformerConfig:
    """The paper's base model as a :class:`TransformerConfig`: N = 6, d_model = 512,
    d_ff = 2048, h = 8, P_drop = 0.1, one shared vocabulary (37,000 BPE tokens for WMT
    English-German) with the embeddings and the output projection tied. Keyword arguments
    override these settings; ``transformer_base().build()`` is the model."""
    settings = dict(num_hiddens=512, ffn_num_hiddens=2048, num_heads=8, num_layers=6,
                    dropout=0.1, share_embeddings=True, tie_output=True)
    settings.update(overrides)
    return TransformerConfig(vocab_size, vocab_size, **settings)


def num_parameters(module: nn.Module) -> int:
    """Number of distinct parameters of ``module`` (a shared tensor is counted once)."""
    return sum(p.numel() for p in module.parameters())
