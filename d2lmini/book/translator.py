"""A trained translator outside PyTorch: its encoder and decoder as ONNX graphs, with what a
runtime needs besides (the vocabularies, the special tokens, the decoding settings).

ONNX Runtime runs the graphs in Python (``onnxruntime``) or in a web page (``onnxruntime-web``):
the book's chapter 6 translates the reader's sentence in the page with them. The decoder graph
takes the whole target prefix at every step (no key-value cache, so that one graph serves every
step) and returns the logits of its last position and the cross-attention weights of every layer
and head, for the heat map.

The weights can be stored in half precision (``precision='float16'``) to halve the download;
the graph still computes in float32 from the rounded weights, so it computes what
:func:`round_weights` ``(net)`` computes in PyTorch.

Taught in :ref:`sec-training-translation-try`.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import html
import io
import json
import logging
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..attention import store_attention_weights
from ..utils import check_non_negative_int, check_number, check_positive_int

__all__ = ["round_weights", "TranslatorExport", "export_translator", "TranslatorPanel"]

#: The weight precisions :func:`export_translator` writes.
PRECISIONS = ("float32", "float16")


def round_weights(net: nn.Module, precision: str = "float16") -> nn.Module:
    """A copy of ``net`` whose floating-point parameters and buffers are rounded to
    ``precision`` (``'float16'`` or ``'float32'``, which copies) and kept in float32: what the
    exported graph computes with its stored weights. ``net`` is left as it is.

    Raises:
        ValueError: ``precision`` is not one of ``'float32'``, ``'float16'``.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}; got {precision!r}")
    if not isinstance(net, nn.Module):
        raise TypeError(f"net must be a torch.nn.Module; got {type(net).__name__}")
    rounded = copy.deepcopy(net)
    if precision == "float16":
        with torch.no_grad():
            for tensor in [*rounded.parameters(), *rounded.buffers()]:
                if tensor.is_floating_point():
                    tensor.copy_(tensor.to(torch.float16).to(tensor.dtype))
    return rounded


class _EncoderGraph(nn.Module):
    """src ``(B, S)`` int64, src_len ``(B,)`` int64 -> memory ``(B, S, d)``."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.encoder = net.encoder

    def forward(self, src: torch.Tensor, src_len: torch.Tensor) -> torch.Tensor:
        return self.encoder(src, src_len)


class _DecoderGraph(nn.Module):
    """tgt ``(B, T)`` (``<bos>`` and the tokens so far), memory ``(B, S, d)``, src_len ``(B,)``
    -> the logits of the last position ``(B, V)`` and the cross-attention weights of every
    position, ``(num_layers, B, num_heads, T, S)``."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.decoder = net.decoder

    def forward(self, tgt: torch.Tensor, memory: torch.Tensor,
                src_len: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        state = self.decoder.init_state(memory, src_len)
        logits, _ = self.decoder(tgt, state)
        cross = torch.stack([w for _, w in self.decoder.attention_weights])
        return logits[:, -1], cross


@dataclass
class TranslatorExport:
    """What :func:`export_translator` returns.

    Attributes:
        encoder, decoder: the two ONNX graphs, serialized.
        config: a JSON-ready dict: the vocabularies (``src_tokens``, ``tgt_tokens``: the token
            of each id), the ids of ``<unk>``, ``<pad>``, ``<bos>``, ``<eos>``, ``num_steps``
            (a source is cut to it, ``<eos>`` included, as :func:`d2lmini.build_array_nmt`
            does), the decoding settings (``beam_size``, ``alpha`` of the GNMT length penalty,
            ``max_extra``: at most source length + ``max_extra`` output tokens; ``sep``, how
            output tokens are joined), the model's sizes and the weight ``precision``.
        examples: for each example source, what d2lmini makes of it with the exported
            weights: ``{"source": str, "greedy": tokens, "beam": tokens}``, and for the first
            ones ``"attention"``, the cross-attention weights of the beam output
            ``[layer][head][output position][source position]``.
    """

    encoder: bytes
    decoder: bytes
    config: dict[str, Any]
    examples: list[dict[str, Any]]

    @property
    def num_bytes(self) -> int:
        """The size of both graphs, in bytes."""
        return len(self.encoder) + len(self.decoder)

    def payload(self) -> dict[str, Any]:
        """What a page needs to run the model: ``config`` with the graphs in base64."""
        return {"config": self.config,
                "encoder": base64.b64encode(self.encoder).decode("ascii"),
                "decoder": base64.b64encode(self.decoder).decode("ascii")}


@contextlib.contextmanager
def _quiet() -> Any:
    """The exporter's progress lines, log records and warnings kept out of the output (a
    notebook cell shows them all)."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _to_onnx(module: nn.Module, args: tuple, names: tuple[list[str], list[str]],
             dynamic_shapes: dict) -> bytes:
    """``module`` exported by ``torch.onnx`` (the ``torch.export`` path), serialized."""
    import onnx

    with _quiet():
        program = torch.onnx.export(module, args, input_names=names[0], output_names=names[1],
                                    dynamic_shapes=dynamic_shapes, dynamo=True,
                                    external_data=False, verbose=False)
    buffer = io.BytesIO()
    onnx.save_model(program.model_proto, buffer)
    return buffer.getvalue()


def _half_initializers(model_bytes: bytes, min_size: int = 64) -> bytes:
    """The graph with every float32 initializer of at least ``min_size`` numbers stored as
    float16 and cast back to float32 where it is used (exact for weights already rounded)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    casts, kept = [], []
    for init in graph.initializer:
        array = numpy_helper.to_array(init)
        if init.data_type != onnx.TensorProto.FLOAT or array.size < min_size:
            kept.append(init)
            continue
        half = numpy_helper.from_array(array.astype("float16"), init.name + "__f16")
        kept.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name],
                                      to=onnx.TensorProto.FLOAT, name=init.name + "__cast"))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _cross_attention(model: nn.Module, src: torch.Tensor, src_len: torch.Tensor,
                     out: list[int], bos: int) -> list:
    """The cross-attention weights of output ``out`` (a forward pass over ``<bos>`` and it):
    ``[layer][head][output position][source position]``, 6 decimals."""
    with store_attention_weights(model), torch.no_grad():
        state = model.decoder.init_state(model.encoder(src, src_len), src_len)
        model.decoder(torch.tensor([[bos, *out]]), state)
        weights = torch.stack([w[0] for _, w in model.decoder.attention_weights])
    return weights.double().round(decimals=6).tolist()


def _examples(model: nn.Module, sources: Sequence[Sequence[str]], src_vocab: Any,
              tgt_vocab: Any, config: dict[str, Any], num_attention: int) -> list[dict]:
    """What d2lmini's greedy and beam search make of ``sources`` with ``model``, one at a
    time (as a page translates), with the settings of ``config``."""
    from ..data import build_array_nmt
    from ..decode import translate

    settings = dict(max_len=lambda n: n + config["max_extra"], batch_size=1)
    greedy = translate(model, sources, src_vocab, tgt_vocab, config["num_steps"], "cpu",
                       **settings)
    beam = translate(model, sources, src_vocab, tgt_vocab, config["num_steps"], "cpu",
                     beam_size=config["beam_size"], alpha=config["alpha"], penalty="gnmt",
                     **settings)
    examples = []
    for i, (source, g, b) in enumerate(zip(sources, greedy, beam)):
        example = {"source": " ".join(source), "greedy": g, "beam": b}
        if i < num_attention:
            X, X_len = build_array_nmt([source], src_vocab, config["num_steps"])
            example["attention"] = _cross_attention(model, X[:, :int(X_len[0])], X_len,
                                                    tgt_vocab[b], config["bos"])
        examples.append(example)
    return examples


def _check_settings(num_steps: int, beam_size: int, alpha: float, max_extra: int, sep: str,
                    examples: Sequence[Sequence[str]], num_attention: int) -> None:
    """The checks of :func:`export_translator`'s arguments."""
    check_positive_int(num_steps, "num_steps")
    check_positive_int(beam_size, "beam_size")
    check_number(alpha, "alpha", minimum=0)
    check_non_negative_int(max_extra, "max_extra")
    check_non_negative_int(num_attention, "num_attention")
    if not isinstance(sep, str):
        raise TypeError(f"sep must be a str; got {type(sep).__name__}")
    if isinstance(examples, str) or any(isinstance(e, str) for e in examples):
        raise TypeError("examples must be tokenised sentences (lists of str), not str")


def export_translator(net: nn.Module, src_vocab: Any, tgt_vocab: Any, *, num_steps: int,
                      precision: str = "float16", beam_size: int = 4, alpha: float = 0.6,
                      max_extra: int = 50, sep: str = " ",
                      examples: Sequence[Sequence[str]] = (),
                      num_attention: int = 10) -> TranslatorExport:
    """Export a trained encoder-decoder (:class:`d2lmini.EncoderDecoder` with a
    :class:`d2lmini.TransformerDecoder`) for ONNX Runtime.

    Args:
        net: the model; it is not changed (a rounded copy is exported, on the CPU, in eval
            mode, storing its attention weights).
        src_vocab, tgt_vocab: the :class:`d2lmini.Vocab` of each side.
        num_steps: the source length of training; a runtime cuts longer sources to it.
        precision: how the weights are stored, ``'float16'`` (half the bytes; the graph
            computes what ``round_weights(net)`` computes) or ``'float32'``.
        beam_size, alpha, max_extra, sep: the decoding a runtime should use (beam search
            with the GNMT length penalty, at most source length + ``max_extra`` tokens, output
            tokens joined with ``sep``: ``''`` for characters).
        examples: tokenised sources that d2lmini translates with the exported weights, for a
            runtime to be compared with (:attr:`TranslatorExport.examples`); the attention
            weights are kept for the first ``num_attention``.

    Returns:
        :class:`TranslatorExport`. Needs the ``onnx`` and ``onnxscript`` packages.
    """
    _check_settings(num_steps, beam_size, alpha, max_extra, sep, examples, num_attention)
    model = round_weights(net, precision).cpu().eval()  # checks net and precision
    attention = model.decoder.blks[0].attention2
    with store_attention_weights(model), torch.no_grad():
        src = torch.tensor([[4, 5, 6, 3]]) % len(src_vocab)
        src_len = torch.tensor([4])
        memory = model.encoder(src, src_len)
        tgt = torch.tensor([[1, 4, 5]]) % len(tgt_vocab)
        B, S, T = (torch.export.Dim(name) for name in ("B", "S", "T"))
        encoder = _to_onnx(_EncoderGraph(model), (src, src_len),
                           (["src", "src_len"], ["memory"]),
                           {"src": {0: B, 1: S}, "src_len": {0: B}})
        decoder = _to_onnx(_DecoderGraph(model), (tgt, memory, src_len),
                           (["tgt", "memory", "src_len"], ["logits", "cross_attention"]),
                           {"tgt": {0: B, 1: T}, "memory": {0: B, 1: S}, "src_len": {0: B}})
    if precision == "float16":
        encoder, decoder = _half_initializers(encoder), _half_initializers(decoder)
    specials = {name: tgt_vocab[f"<{name}>"] for name in ("unk", "pad", "bos", "eos")}
    config = {
        "src_tokens": list(src_vocab.idx_to_token), "tgt_tokens": list(tgt_vocab.idx_to_token),
        "src_unk": src_vocab["<unk>"], "src_eos": src_vocab["<eos>"], **specials,
        "num_steps": num_steps, "beam_size": beam_size, "alpha": alpha, "penalty": "gnmt",
        "max_extra": max_extra, "sep": sep, "num_layers": len(model.decoder.blks),
        "num_heads": attention.num_heads, "num_hiddens": model.decoder.num_hiddens,
        "precision": precision}
    return TranslatorExport(encoder, decoder, config,
                            _examples(model, examples, src_vocab, tgt_vocab, config,
                                      num_attention))


def _script_json(data: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``<`` (so no ``</script>``), non-ASCII kept."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


class TranslatorPanel:
    """The book's "translate it yourself" panel: the reader types an English sentence and the
    exported models translate it in the page (ONNX Runtime Web, no server), by greedy and by
    beam search, with their cross-attention weights as a heat map.

    Jupyter shows it through its rich display: ``text/html`` holds each model's payload
    (:meth:`TranslatorExport.payload`, its heading and its example sources) and d2lmini's own
    translations of the examples, which the book's build moves into files of the site (the
    page loads the models when the panel comes into view; the tests compare the page with
    d2lmini); ``text/markdown`` is ``text``, what the PDF prints in its place.

    Args:
        models: ``name -> (export, heading)``, e.g. ``{"fra-eng": (fra, "English → French")}``.
        lang: the page's language, ``'en'`` or ``'zh'`` (the panel's own labels).
        text: what is printed where the panel cannot run (the PDF).
    """

    def __init__(self, models: Mapping[str, tuple[TranslatorExport, str]], *, lang: str,
                 text: str) -> None:
        if lang not in ("en", "zh"):
            raise ValueError(f"lang must be 'en' or 'zh'; got {lang!r}")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text must be a non-empty str: what the PDF prints instead")
        if not models:
            raise ValueError("models must name at least one exported model")
        for name, value in models.items():
            if (not isinstance(name, str) or not name.replace("-", "").isalnum()
                    or not isinstance(value, tuple) or len(value) != 2
                    or not isinstance(value[0], TranslatorExport)
                    or not isinstance(value[1], str)):
                raise TypeError("models must map names such as 'fra-eng' to (TranslatorExport, "
                                f"heading) pairs; got {name!r}")
        self.models, self.lang, self.text = dict(models), lang, text

    def to_html(self) -> str:
        parts = [f'<div class="d2l-translator" data-lang="{self.lang}">']
        for name, (export, heading) in self.models.items():
            payload = {**export.payload(), "heading": heading,
                       "examples": [e["source"] for e in export.examples]}
            parts.append(f'<script type="application/json" class="d2l-translator-model" '
                         f'data-name="{name}">{_script_json(payload)}</script>')
            parts.append(f'<script type="application/json" class="d2l-translator-reference" '
                         f'data-name="{name}">{_script_json(export.examples)}</script>')
        parts.append(f'<p class="d2l-translator-fallback">{html.escape(self.text)}</p></div>')
        return "".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/html": self.to_html(), "text/markdown": self.text,
                "text/plain": self.text}

    def __repr__(self) -> str:
        return f"<TranslatorPanel: {', '.join(self.models)}>"
