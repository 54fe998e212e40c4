"""The d2l 0.17.6 Transformer, as the d2l book defines it, for the benchmarks.

``d2l.torch`` (``pip install --no-deps d2l==0.17.6``) ships ``EncoderDecoder``,
``TransformerEncoder``, ``MultiHeadAttention``, ``PositionalEncoding``, ``AddNorm``,
``PositionWiseFFN``, ``train_seq2seq`` and ``predict_seq2seq``. The chapter's ``DecoderBlock``
and ``TransformerDecoder`` are not in the package; they are rebuilt here exactly as the
PyTorch chapter of d2l 0.17.6 (section "Transformer") writes them. In particular the decoder
caches the *inputs* of every block's self-attention (``state[2][i]``) and re-projects all of
them at each prediction step, and its positional encoding restarts at position 0 for every
call (the d2l code's behaviour when decoding one token at a time; kept on purpose).

Importing ``d2l.torch`` needs torchvision, pandas, PIL, requests, IPython and matplotlib. The
benchmarks use none of their features, so :func:`import_d2l` installs small stand-ins in
``sys.modules`` for those that are not installed (only the attributes touched at import).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import math
import sys
import types

import torch
from torch import nn

__all__ = ["import_d2l", "DecoderBlock", "TransformerDecoder", "d2l_transformer",
           "predict_seq2seq_positions_fixed", "check_positions_fixed", "stubbed_modules"]

#: names of the modules replaced by stand-ins (filled by :func:`import_d2l`)
stubbed_modules: list[str] = []


def _stub(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    # a spec, so that importlib.util.find_spec (used by torch._dynamo) accepts the stand-in
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None)
    mod.__d2l_bench_stub__ = True
    sys.modules[name] = mod
    stubbed_modules.append(name)
    return mod


def _missing(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def import_d2l():
    """Import and return ``d2l.torch``, stubbing torchvision/pandas/PIL if they are absent."""
    if "d2l.torch" in sys.modules:
        return sys.modules["d2l.torch"]
    if _missing("torchvision"):
        class _Anything:  # transforms.Compose([...]) etc. are only used inside functions
            def __init__(self, *a, **k):
                pass

            def __call__(self, *a, **k):
                raise RuntimeError("torchvision is stubbed for the benchmarks")

        transforms = _stub("torchvision.transforms", Compose=_Anything, ToTensor=_Anything,
                           Resize=_Anything, Normalize=_Anything, RandomCrop=_Anything,
                           functional=types.SimpleNamespace(crop=_Anything))
        datasets = _stub("torchvision.datasets", FashionMNIST=_Anything)
        io = _stub("torchvision.io", read_image=_Anything,
                   image=types.SimpleNamespace(ImageReadMode=types.SimpleNamespace(RGB=0)))
        _stub("torchvision", transforms=transforms, datasets=datasets, io=io)
    if _missing("pandas"):
        _stub("pandas")
    if _missing("PIL"):
        pil = _stub("PIL")
        pil.Image = _stub("PIL.Image")
    import d2l.torch as d2l  # noqa: E402  (after the stand-ins)
    return d2l


d2l = import_d2l()


class DecoderBlock(nn.Module):
    """The i-th block of the decoder (d2l 0.17.6, section 10.7)."""

    def __init__(self, key_size, query_size, value_size, num_hiddens,
                 norm_shape, ffn_num_input, ffn_num_hiddens, num_heads,
                 dropout, i, **kwargs):
        super(DecoderBlock, self).__init__(**kwargs)
        self.i = i
        self.attention1 = d2l.MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm1 = d2l.AddNorm(norm_shape, dropout)
        self.attention2 = d2l.MultiHeadAttention(
            key_size, query_size, value_size, num_hiddens, num_heads, dropout)
        self.addnorm2 = d2l.AddNorm(norm_shape, dropout)
        self.ffn = d2l.PositionWiseFFN(ffn_num_input, ffn_num_hiddens,
                                       num_hiddens)
        self.addnorm3 = d2l.AddNorm(norm_shape, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        # During training all target tokens are processed at once, so state[2][self.i]
        # is None. During prediction, tokens come one by one and state[2][self.i] holds
        # the block's inputs (not their projections) of every step so far.
        if state[2][self.i] is None:
            key_values = X
        else:
            key_values = torch.cat((state[2][self.i], X), axis=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            # dec_valid_lens: (batch_size, num_steps), each row is [1, 2, ..., num_steps]
            dec_valid_lens = torch.arange(
                1, num_steps + 1, device=X.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None

        # Self-attention
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        # Encoder-decoder attention. enc_outputs: (batch_size, num_steps, num_hiddens)
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(d2l.AttentionDecoder):
    """The Transformer decoder (d2l 0.17.6, section 10.7)."""

    def __init__(self, vocab_size, key_size, query_size, value_size,
                 num_hiddens, norm_shape, ffn_num_input, ffn_num_hiddens,
                 num_heads, num_layers, dropout, **kwargs):
        super(TransformerDecoder, self).__init__(**kwargs)
        self.num_hiddens = num_hiddens
        self.num_layers = num_layers
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_encoding = d2l.PositionalEncoding(num_hiddens, dropout)
        self.blks = nn.Sequential()
        for i in range(num_layers):
            self.blks.add_module("block" + str(i),
                                 DecoderBlock(key_size, query_size, value_size, num_hiddens,
                                              norm_shape, ffn_num_input, ffn_num_hiddens,
                                              num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs, enc_valid_lens, *args):
        return [enc_outputs, enc_valid_lens, [None] * self.num_layers]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            # Decoder self-attention weights
            self._attention_weights[0][
                i] = blk.attention1.attention.attention_weights
            # Encoder-decoder attention weights
            self._attention_weights[1][
                i] = blk.attention2.attention.attention_weights
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights


def d2l_transformer(src_vocab_size: int, tgt_vocab_size: int, num_hiddens: int,
                    ffn_num_hiddens: int, num_heads: int, num_layers: int,
                    dropout: float) -> nn.Module:
    """The chapter's model: key/query/value sizes and ``ffn_num_input`` equal
    ``num_hiddens``, ``norm_shape = [num_hiddens]``."""
    key_size = query_size = value_size = ffn_num_input = num_hiddens
    norm_shape = [num_hiddens]
    encoder = d2l.TransformerEncoder(
        src_vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
        ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout)
    decoder = TransformerDecoder(
        tgt_vocab_size, key_size, query_size, value_size, num_hiddens, norm_shape,
        ffn_num_input, ffn_num_hiddens, num_heads, num_layers, dropout)
    return d2l.EncoderDecoder(encoder, decoder)


class _PositionsFrom(nn.Module):
    """d2l's positional encoding, continued across calls: the ``T`` inputs of a call receive the
    encodings of positions ``start .. start + T - 1``, and ``start`` moves on by ``T`` (d2l's
    own adds those of ``0 .. T - 1`` on every call)."""

    def __init__(self, pos_encoding: nn.Module) -> None:
        super().__init__()
        self.pos_encoding, self.start = pos_encoding, 0

    def forward(self, X):
        P = self.pos_encoding.P[:, self.start:self.start + X.shape[1], :].to(X.device)
        self.start += X.shape[1]
        return self.pos_encoding.dropout(X + P)


@contextlib.contextmanager
def _positions_fixed(net):
    """Within the block, ``net``'s decoder continues its positions across calls."""
    original = net.decoder.pos_encoding
    net.decoder.pos_encoding = _PositionsFrom(original)
    try:
        yield
    finally:
        net.decoder.pos_encoding = original


def predict_seq2seq_positions_fixed(net, src_sentence, src_vocab, tgt_vocab, num_steps, device):
    """d2l 0.17.6's own ``predict_seq2seq``, run with one change: the decoder's positional
    encoding gives the t-th generated token the encoding of position t (d2l's gives every
    token, decoded alone, that of position 0). Same arguments and result."""
    with _positions_fixed(net):
        return d2l.predict_seq2seq(net, src_sentence, src_vocab, tgt_vocab, num_steps, device)


def check_positions_fixed(seed: int = 0) -> float:
    """Raise unless one-token-at-a-time decoding with the positions fixed gives the logits of the
    all-at-once causal pass (training's), while d2l's own one-at-a-time decoding does not;
    return the largest difference of the fixed path."""
    torch.manual_seed(seed)
    net = d2l_transformer(20, 20, 16, 32, 2, 2, 0.0)
    src = torch.randint(3, 20, (1, 6))
    tgt = torch.randint(3, 20, (1, 5))
    valid = torch.tensor([6])
    with torch.no_grad():
        net.train()  # d2l's decoder applies the causal mask in training mode only (dropout is 0)
        enc = net.encoder(src, valid)
        full, _ = net.decoder(tgt, net.decoder.init_state(enc, valid))
        net.eval()

        def one_at_a_time() -> torch.Tensor:
            state, out = net.decoder.init_state(enc, valid), []
            for t in range(tgt.shape[1]):
                y, state = net.decoder(tgt[:, t:t + 1], state)
                out.append(y)
            return torch.cat(out, 1)

        with _positions_fixed(net):
            fixed = (one_at_a_time() - full).abs().max().item()
        shipped = (one_at_a_time() - full).abs().max().item()
    if not (fixed < 1e-4 < shipped):
        raise AssertionError(f"positions fixed: {fixed:.2e} (want < 1e-4); d2l as shipped: "
                             f"{shipped:.2e} (want > 1e-4)")
    return fixed
