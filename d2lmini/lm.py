"""Decoder-only language models: the 2017 block and today's, one switch at a time.

:class:`LMConfig` holds every choice that separates a 2017-style decoder from a Llama-style one
(normalisation, its place, positions, the feed-forward network, key-value heads, ...);
``LMConfig(...).build()`` makes a :class:`DecoderLM`. Generation keeps a :class:`KVCache` of
grouped heads and samples with temperature, top-k and top-p from a seeded generator.

Shapes: ``B`` batch size, ``T`` steps in one call, ``d`` = ``num_hiddens``, ``h`` query heads,
``h_kv`` key-value heads, ``d_h = d / h`` features per head, ``V`` vocabulary size.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .transformer import PositionalEncoding
from .utils import check_bool, check_number, check_positive_int

__all__ = [
    "LMConfig",
    "RMSNorm",
    "norm_layer",
    "apply_rope",
    "rope_permutation",
    "FeedForward",
    "KVCache",
    "CausalSelfAttention",
    "LMBlock",
    "DecoderLM",
    "top_k_filter",
    "top_p_filter",
    "sample_next",
    "generate",
    "make_adamw",
    "warmup_cosine",
]

_CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "position": ("sinusoidal", "learned", "rope", "none"),
    "ffn": ("relu", "gelu", "gelu_tanh", "swiglu"),
    "rope_layout": ("interleaved", "half"),
}


@dataclass
class LMConfig:
    """The hyperparameters of a decoder-only language model; ``build()`` makes the model.

    Each switch has the 2017 value and the modern one:

    * ``norm``: ``'layernorm'`` (2017, GPT-2) or ``'rmsnorm'`` (Llama); ``norm_eps`` its epsilon.
    * ``norm_first``: ``False`` is the paper's post-LN, ``True`` pre-LN (GPT-2 onwards; then a
      final normalisation precedes the output layer).
    * ``position``: ``'sinusoidal'`` (2017), ``'learned'`` (GPT-2), ``'rope'`` (Llama) or
      ``'none'`` (the causal mask alone); ``rope_base`` and ``rope_layout``
      (``'interleaved'`` pairs ``(2i, 2i+1)`` as chapter 7 derives it, ``'half'`` pairs
      ``(i, i + d_h/2)`` as Llama and GPT-NeoX checkpoints store it).
    * ``ffn``: ``'relu'`` (2017), ``'gelu'``, ``'gelu_tanh'`` (GPT-2's approximation) or
      ``'swiglu'`` (Llama). ``ffn_num_hiddens=None`` gives ``4 d`` for the first three and
      ``round(8 d / 3)`` for SwiGLU, whose three matrices then hold as many parameters as two.
    * ``num_kv_heads``: ``None`` or ``num_heads`` is multi-head attention, a divisor of it
      grouped-query attention, ``1`` multi-query attention.
    * ``qk_norm``: RMSNorm on each head's queries and keys (OLMo 2, Qwen 3).
    * ``tie_output``: the output layer reuses the embedding matrix (GPT-2) or not (Llama).
    * ``bias``: biases in the linear layers (GPT-2) or none (Llama); the output layer has none.

    ``max_len`` bounds the positions of the sinusoidal and learned tables (RoPE and ``'none'``
    have no table). ``init_std`` is the standard deviation of the initial weights (GPT-2's 0.02;
    the projections into the residual stream get ``init_std / sqrt(2 num_layers)``).
    """

    vocab_size: int
    num_hiddens: int = 128
    num_heads: int = 4
    num_layers: int = 4
    num_kv_heads: int | None = None
    ffn_num_hiddens: int | None = None
    norm: str = "rmsnorm"
    norm_first: bool = True
    norm_eps: float = 1e-5
    position: str = "rope"
    rope_base: float = 10000.0
    rope_layout: str = "half"
    ffn: str = "swiglu"
    qk_norm: bool = False
    tie_output: bool = False
    bias: bool = False
    dropout: float = 0.0
    max_len: int = 1024
    init_std: float = 0.02

    def __post_init__(self) -> None:
        for name in ("vocab_size", "num_hiddens", "num_heads", "num_layers", "max_len"):
            check_positive_int(getattr(self, name), name)
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}; got {getattr(self, name)!r}")
        if self.num_hiddens % self.num_heads:
            raise ValueError(f"num_heads must divide num_hiddens = {self.num_hiddens}; "
                             f"got {self.num_heads}")
        if self.num_kv_heads is None:
            self.num_kv_heads = self.num_heads
        check_positive_int(self.num_kv_heads, "num_kv_heads")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_kv_heads must divide num_heads = {self.num_heads}; got "
                             f"{self.num_kv_heads}")
        if self.position == "rope" and self.head_dim % 2:
            raise ValueError(f"RoPE rotates pairs of features: num_hiddens / num_heads must be "
                             f"even; got {self.head_dim}")
        if self.ffn_num_hiddens is None:
            self.ffn_num_hiddens = (round(8 * self.num_hiddens / 3) if self.ffn == "swiglu"
                                    else 4 * self.num_hiddens)
        check_positive_int(self.ffn_num_hiddens, "ffn_num_hiddens")
        for name in ("norm_first", "qk_norm", "tie_output", "bias"):
            check_bool(getattr(self, name), name)
        check_number(self.dropout, "dropout", minimum=0, below=1)
        for name in ("norm_eps", "rope_base", "init_std"):
            check_number(getattr(self, name), name, above=0)

    @property
    def head_dim(self) -> int:
        """``d_h = num_hiddens / num_heads``."""
        return self.num_hiddens // self.num_heads

    def replace(self, **changes: Any) -> LMConfig:
        """A copy with ``changes`` (``ffn_num_hiddens`` is derived again unless given)."""
        if "ffn" in changes and "ffn_num_hiddens" not in changes:
            changes["ffn_num_hiddens"] = None
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (for JSON records and cache keys)."""
        return asdict(self)

    def build(self) -> DecoderLM:
        """A freshly initialised :class:`DecoderLM`; the config is its ``config`` attribute."""
        return DecoderLM(self)


class RMSNorm(nn.Module):
    """Root-mean-square normalisation (Zhang & Sennrich 2019): ``x / sqrt(mean(x^2) + eps) * g``.

    Unlike LayerNorm it subtracts no mean and adds no bias. Input ``(..., d)`` -> same shape;
    the statistics are computed in float32 at least. Equals ``torch.nn.RMSNorm(d, eps)``.

    Taught in :ref:`sec-modern-transformer-rmsnorm`.
    """

    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        check_positive_int(num_features, "num_features")  # @check
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_features))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        Xf = X.float() if X.dtype in (torch.float16, torch.bfloat16) else X
        Xf = Xf * torch.rsqrt(Xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * Xf.to(X.dtype)


def norm_layer(config: LMConfig) -> nn.Module:
    """The normalisation ``config.norm`` names, over ``num_hiddens`` features: RMSNorm, or
    LayerNorm (with a bias when ``config.bias``).

    Taught in :ref:`sec-modern-transformer-rmsnorm`.
    """
    if config.norm == "rmsnorm":
        return RMSNorm(config.num_hiddens, config.norm_eps)
    return nn.LayerNorm(config.num_hiddens, eps=config.norm_eps, bias=config.bias)


def apply_rope(X: torch.Tensor, positions: torch.Tensor, base: float = 10000.0,
               layout: str = "interleaved") -> torch.Tensor:
    """Rotate pairs of features of ``X`` ``(..., T, d_h)`` by the angles ``positions * theta_i``,
    ``theta_i = base^(-2i / d_h)``, for ``positions`` of shape ``(T,)``.

    ``layout='interleaved'`` rotates the pairs ``(x_2i, x_2i+1)`` (chapter 7's derivation);
    ``'half'`` rotates ``(x_i, x_(i + d_h/2))`` (the "rotate-half" layout of Llama and GPT-NeoX).
    The two agree up to the feature permutation :func:`rope_permutation`. The angles are
    computed in float64 and the result has the dtype of ``X``.

    Taught in :ref:`sec-modern-transformer-rope`.
    """
    d = X.shape[-1]
    if d % 2:  # @check
        raise ValueError(f"RoPE rotates pairs of features: the last dimension must be even; "
                         f"got {d}")
    if layout not in ("interleaved", "half"):  # @check
        raise ValueError(f"layout must be 'interleaved' or 'half'; got {layout!r}")
    if positions.shape != (X.shape[-2],):  # @check
        raise ValueError(f"positions must have shape (T,) = ({X.shape[-2]},); got "
                         f"{tuple(positions.shape)}")
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64, device=X.device) / d)
    angles = positions.to(device=X.device, dtype=torch.float64)[:, None] * theta  # (T, d/2)
    cos, sin = angles.cos().to(X.dtype), angles.sin().to(X.dtype)
    if layout == "interleaved":
        x1, x2 = X[..., 0::2], X[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)
    x1, x2 = X[..., : d // 2], X[..., d // 2:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def rope_permutation(d: int) -> torch.Tensor:
    """The feature order ``[0, 2, 4, ..., 1, 3, 5, ...]`` (length ``d``, even) that turns the
    interleaved RoPE layout into the rotate-half one:
    ``apply_rope(x[..., p], pos, layout='half') == apply_rope(x, pos)[..., p]``. Permuting the
    rows of ``W_q`` and ``W_k`` of every head this way converts a checkpoint between layouts.

    Taught in :ref:`sec-modern-transformer-rope`.
    """
    check_positive_int(d, "d")  # @check
    if d % 2:  # @check
        raise ValueError(f"d must be even; got {d}")
    return torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))


class FeedForward(nn.Module):
    """The position-wise feed-forward network: ``W_2 act(W_1 x)`` for ReLU and GELU, or
    SwiGLU's ``W_down (SiLU(W_gate x) * W_up x)`` (Shazeer 2020). ``(B, T, d)`` -> ``(B, T, d)``.

    Taught in :ref:`sec-modern-transformer-swiglu`.
    """

    def __init__(self, config: LMConfig) -> None:
        super().__init__()
        d, d_ff, bias = config.num_hiddens, config.ffn_num_hiddens, config.bias
        self.kind = config.ffn
        self.W_1 = nn.Linear(d, d_ff, bias=bias)  # SwiGLU's W_gate
        self.W_up = nn.Linear(d, d_ff, bias=bias) if self.kind == "swiglu" else None
        self.W_2 = nn.Linear(d_ff, d, bias=bias)  # SwiGLU's W_down
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        if self.kind == "swiglu":
            H = F.silu(self.W_1(X)) * self.W_up(X)
        elif self.kind == "relu":
            H = F.relu(self.W_1(X))
        else:
            H = F.gelu(self.W_1(X), approximate="tanh" if self.kind == "gelu_tanh" else "none")
        return self.dropout(self.W_2(H))


class KVCache:
    """The keys and values of every layer so far, for generation one token at a time.

    ``keys[l]`` and ``values[l]`` have shape ``(B, h_kv, T_so_far, d_h)``: with grouped-query
    attention the cache holds ``h_kv`` heads, not ``h``, and is ``h / h_kv`` times smaller.

    Taught in :ref:`sec-modern-transformer-gqa`.
    """

    def __init__(self, num_layers: int) -> None:
        self.keys: list[torch.Tensor | None] = [None] * num_layers
        self.values: list[torch.Tensor | None] = [None] * num_layers

    @property
    def length(self) -> int:
        """The number of positions cached (0 before the first call)."""
        return self.length_at(0)

    def length_at(self, layer: int) -> int:
        """The number of positions layer ``layer`` has cached (during a forward pass the layers
        below it have already added the new ones)."""
        return 0 if self.keys[layer] is None else self.keys[layer].shape[2]

    @property
    def nbytes(self) -> int:
        """The memory the cached tensors hold, in bytes."""
        return sum(t.nbytes for t in self.keys + self.values if t is not None)

    def update(self, layer: int, k: torch.Tensor,
               v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``k, v`` ``(B, h_kv, T, d_h)`` to layer ``layer``'s cache; return all so far."""
        if self.keys[layer] is not None:
            k = torch.cat((self.keys[layer], k), dim=2)
            v = torch.cat((self.values[layer], v), dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


class CausalSelfAttention(nn.Module):
    """Causal self-attention with ``h`` query heads and ``h_kv`` key-value heads (MHA, GQA,
    MQA), optional RoPE on queries and keys, optional QK-norm, and a :class:`KVCache`.

    Each key-value head serves ``h / h_kv`` consecutive query heads; the heads are repeated
    (``repeat_interleave``) before the scaled dot product. ``(B, T, d)`` -> ``(B, T, d)``.

    Taught in :ref:`sec-modern-transformer-gqa`.
    """

    def __init__(self, config: LMConfig, layer: int = 0) -> None:
        super().__init__()
        d, d_h, bias = config.num_hiddens, config.head_dim, config.bias
        self.config, self.layer = config, layer
        self.h, self.h_kv, self.d_h = config.num_heads, config.num_kv_heads, d_h
        self.W_q = nn.Linear(d, self.h * d_h, bias=bias)
        self.W_k = nn.Linear(d, self.h_kv * d_h, bias=bias)
        self.W_v = nn.Linear(d, self.h_kv * d_h, bias=bias)
        self.W_o = nn.Linear(self.h * d_h, d, bias=bias)
        self.q_norm = RMSNorm(d_h, config.norm_eps) if config.qk_norm else None
        self.k_norm = RMSNorm(d_h, config.norm_eps) if config.qk_norm else None
        self.dropout = config.dropout

    def forward(self, X: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        B, T, _ = X.shape
        start = 0 if cache is None else cache.length_at(self.layer)
        q = self.W_q(X).unflatten(-1, (self.h, self.d_h)).transpose(1, 2)  # (B, h, T, d_h)
        k = self.W_k(X).unflatten(-1, (self.h_kv, self.d_h)).transpose(1, 2)  # (B, h_kv, ..)
        v = self.W_v(X).unflatten(-1, (self.h_kv, self.d_h)).transpose(1, 2)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.config.position == "rope":
            pos = torch.arange(start, start + T, device=X.device)
            q = apply_rope(q, pos, self.config.rope_base, self.config.rope_layout)
            k = apply_rope(k, pos, self.config.rope_base, self.config.rope_layout)
        if cache is not None:
            k, v = cache.update(self.layer, k, v)  # (B, h_kv, start + T, d_h)
        group = self.h // self.h_kv  # query heads per key-value head
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        # query t (absolute position start + t) sees keys 0 .. start + t
        mask = None if start == 0 else torch.ones(
            T, start + T, dtype=torch.bool, device=X.device).tril(diagonal=start)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=mask is None,
            dropout_p=self.dropout if self.training else 0.0)
        return self.W_o(out.transpose(1, 2).flatten(2))  # (B, T, h * d_h) -> (B, T, d)


class LMBlock(nn.Module):
    """One decoder-only layer: causal self-attention and a feed-forward network, each in a
    residual connection with normalisation before (pre-LN) or after (post-LN) the addition.
    ``(B, T, d)`` -> ``(B, T, d)``.

    Taught in :ref:`sec-modern-transformer-model`.
    """

    def __init__(self, config: LMConfig, layer: int = 0) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.norm1, self.norm2 = norm_layer(config), norm_layer(config)
        self.attention = CausalSelfAttention(config, layer)
        self.ffn = FeedForward(config)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, X: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        if self.norm_first:  # x + f(norm(x))
            X = X + self.dropout(self.attention(self.norm1(X), cache))
            return X + self.ffn(self.norm2(X))
        X = self.norm1(X + self.dropout(self.attention(X, cache)))  # norm(x + f(x))
        return self.norm2(X + self.ffn(X))


class DecoderLM(nn.Module):
    """A decoder-only language model: token embedding, positions (sinusoidal or learned tables,
    or none here when RoPE acts inside attention), ``num_layers`` :class:`LMBlock` s, a final
    normalisation for pre-LN, and the output layer (tied to the embedding or not).

    ``forward(X, cache=None)``: token ids ``X`` ``(B, T)`` -> logits ``(B, T, V)``; with a
    :class:`KVCache` the tokens continue the cached ones (positions ``cache.length ...``).

    Taught in :ref:`sec-modern-transformer-model`.
    """

    def __init__(self, config: LMConfig) -> None:
        super().__init__()
        self.config = config
        d = config.num_hiddens
        self.embedding = nn.Embedding(config.vocab_size, d)
        self.pos_embedding = (nn.Embedding(config.max_len, d) if config.position == "learned"
                              else None)
        if config.position == "sinusoidal":
            self.register_buffer("P", PositionalEncoding(d, 0.0, config.max_len).P[0],
                                 persistent=False)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(LMBlock(config, i) for i in range(config.num_layers))
        self.final_norm = norm_layer(config) if config.norm_first else None
        self.head = nn.Linear(d, config.vocab_size, bias=False)
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # projections into the residual stream
            if name.endswith(("W_o.weight", "W_2.weight")):
                nn.init.normal_(p, std=config.init_std / math.sqrt(2 * config.num_layers))
        if config.tie_output:
            self.head.weight = self.embedding.weight

    def _init_weights(self, m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=self.config.init_std)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, X: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        if X.dim() != 2:  # @check
            raise ValueError(f"X must hold token ids of shape (B, T); got {tuple(X.shape)}")
        start = 0 if cache is None else cache.length
        end = start + X.shape[1]
        if (self.config.position in ("sinusoidal", "learned")  # @check
                and end > self.config.max_len):
            raise ValueError(f"positions up to {end} exceed max_len = {self.config.max_len}")
        H = self.embedding(X)
        if self.pos_embedding is not None:
            H = H + self.pos_embedding(torch.arange(start, end, device=X.device))
        elif self.config.position == "sinusoidal":
            H = H + self.P[start:end].to(H.dtype)
        H = self.dropout(H)
        for block in self.blocks:
            H = block(H, cache)
        if self.final_norm is not None:
            H = self.final_norm(H)
        return self.head(H)

    def new_cache(self) -> KVCache:
        """An empty :class:`KVCache` for this model's layers."""
        return KVCache(self.config.num_layers)


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the ``k`` largest logits of each row of ``(..., V)``; the others become ``-inf``
    (ties at the k-th value are all kept).

    Taught in :ref:`sec-modern-transformer-generation`.
    """
    check_positive_int(k, "k")  # @check
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filtering (Holtzman et al. 2020): keep the smallest set of most probable tokens
    whose probability mass is at least ``p``; the others become ``-inf``. ``(..., V)`` ->
    ``(..., V)``.

    Tokens are taken in order of decreasing probability, ties by increasing index (a stable
    sort), and a token is kept when the mass of the tokens before it is below ``p``; the mass is
    summed in float64. ``p = 1`` keeps every token; the most probable token is always kept.

    Taught in :ref:`sec-modern-transformer-generation`.
    """
    check_number(p, "p", above=0, maximum=1)  # @check
    probs = torch.softmax(logits.double(), dim=-1)
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    mass_before = sorted_probs.cumsum(-1) - sorted_probs
    keep_sorted = mass_before < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def sample_next(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """One token per row of ``logits`` ``(B, V)`` -> ``(B,)``.

    ``temperature=0`` is greedy (the arg-max); otherwise the logits are divided by the
    temperature, filtered by :func:`top_k_filter` and :func:`top_p_filter` (in that order, when
    given), and a token is drawn with ``torch.multinomial`` from ``generator``.

    Taught in :ref:`sec-modern-transformer-generation`.
    """
    check_number(temperature, "temperature", minimum=0)  # @check
    if logits.dim() != 2:  # @check
        raise ValueError(f"logits must have shape (B, V); got {tuple(logits.shape)}")
    if temperature == 0:
        return logits.argmax(-1)
    logits = logits.float() / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)[:, 0]


@torch.no_grad()
def generate(model: DecoderLM, prompt: torch.Tensor, max_new_tokens: int, *,
             temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
             generator: torch.Generator | None = None, use_cache: bool = True,
             context: int | None = None) -> torch.Tensor:
    """Continue the token ids ``prompt`` ``(B, T)`` by ``max_new_tokens`` tokens, one at a time
    with :func:`sample_next`; returns ``(B, T + max_new_tokens)``.

    With ``use_cache=True`` the prompt is read once and each new token costs one step of every
    layer (:class:`KVCache`); without it the whole sequence is read again at every step. Both
    give the same tokens. ``context``: the most tokens the model reads (the length it was trained
    on); once the sequence is longer, each step reads its last ``context`` tokens afresh, a
    sliding window without the cache (nanoGPT crops the same way). The model is put in eval mode
    and restored afterwards.

    Taught in :ref:`sec-modern-transformer-generation`.
    """
    check_positive_int(max_new_tokens, "max_new_tokens")  # @check
    if context is not None:  # @check
        check_positive_int(context, "context")
    if prompt.dim() != 2 or prompt.shape[1] == 0:  # @check
        raise ValueError(f"prompt must be token ids of shape (B, T) with T >= 1; got "
                         f"{tuple(prompt.shape)}")
    was_training = model.training
    model.eval()
    cache = model.new_cache() if use_cache else None
    tokens, step_input = prompt, prompt
    for _ in range(max_new_tokens):
        if context is not None and tokens.shape[1] > context:  # slide: the last `context`
            logits = model(tokens[:, -context:])[:, -1]
        else:
            logits = model(step_input if use_cache else tokens, cache)[:, -1]
        nxt = sample_next(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                          generator=generator)
        tokens = torch.cat((tokens, nxt[:, None]), dim=1)
        step_input = nxt[:, None]
    model.train(was_training)
    return tokens


def make_adamw(model: nn.Module, lr: float, *, weight_decay: float = 0.1,
               betas: tuple[float, float] = (0.9, 0.95)) -> torch.optim.AdamW:
    """``torch.optim.AdamW`` with decoupled weight decay on the matrices only (linear weights
    and embeddings, ``dim >= 2``), not on gains and biases, as GPT-2 and Llama train.
    ``weight_decay=0`` is Adam.

    Taught in :ref:`sec-modern-transformer-training`.
    """
    check_number(lr, "lr", above=0)  # @check
    check_number(weight_decay, "weight_decay", minimum=0)  # @check
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=betas)


def warmup_cosine(optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int,
                  min_lr_ratio: float = 0.1) -> torch.optim.lr_scheduler.LRScheduler:
    """Linear warm-up from ``lr / warmup_steps`` (step 0) to ``lr`` (step ``warmup_steps``), then
    cosine decay to ``min_lr_ratio * lr`` at ``total_steps``: ``torch.optim.lr_scheduler``'s
    ``LinearLR`` then ``CosineAnnealingLR``, joined by ``SequentialLR``. ``warmup_steps=0``
    is the cosine alone.

    Taught in :ref:`sec-modern-transformer-training`.
    """
    check_positive_int(total_steps, "total_steps")  # @check
    if not 0 <= warmup_steps < total_steps:  # @check
        raise ValueError(f"warmup_steps must be in [0, total_steps = {total_steps}); got "
                         f"{warmup_steps}")
    check_number(min_lr_ratio, "min_lr_ratio", minimum=0, maximum=1)  # @check
    lr = optimizer.param_groups[0]["lr"]
    sched = torch.optim.lr_scheduler
    cosine = sched.CosineAnnealingLR(optimizer, T_max=total_steps - warmup_steps,
                                     eta_min=min_lr_ratio * lr)
    if warmup_steps == 0:
        return cosine
    warmup = sched.LinearLR(optimizer, start_factor=1 / warmup_steps, total_iters=warmup_steps)
    return sched.SequentialLR(optimizer, [warmup, cosine], milestones=[warmup_steps])
