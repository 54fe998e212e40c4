"""Greedy decoding of a forced number of tokens (no stop at <eos>) for a batch of 1 sentence
(latency) and of 64 sentences (throughput), with random weights (d 256, 4 layers, 8 heads,
FFN 1024, vocabulary 1000, source of 12 tokens), in eval mode; the time of a batch includes
the encoder and the decoder's initial state. Every way runs through the one greedy loop,
d2lmini.greedy_search (torch.inference_mode), with a different decoder: kv_cache is
d2lmini's TransformerDecoder (projected keys and values cached, in a preallocated buffer);
input_cache_d2l_way drives d2lmini's own modules the way d2l's decoder works (each block
caches the inputs of its self-attention and re-projects keys and values over every position
at every step; the cross-attention keys and values are projected once, as d2lmini does);
no_cache reruns the decoder on the whole prefix at every step (greedy_search's
use_cache=False); d2l_reference is the d2l chapter's decoder itself (different code, explicit
attention, positions restarting at 0 at every step), for reference. The three d2lmini ways
are checked to produce the same tokens. Competitors are interleaved after a warm-up; medians
of the repetitions; ratios > 1 mean the KV cache is faster."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import torch
from torch import nn

import d2lmini

from . import common

CONFIG = dict(vocab=1000, num_hiddens=256, ffn_num_hiddens=1024, num_heads=8, num_layers=4,
              dropout=0.1, src_len=12)
BOS = 2
#: the ratios recorded, ``<name>_over_kv_cache``: time of a way over that of the KV cache
RATIOS = {"input_cache": "input_cache_d2l_way", "no_cache": "no_cache",
          "d2l_reference": "d2l_reference"}


@dataclass
class InputCache:
    """The state of :class:`InputCacheDecoder`: the source (d2lmini's state, for the
    cross-attention), each block's self-attention inputs so far, and the position."""

    source: d2lmini.DecoderState
    inputs: list
    offset: int = 0


class InputCacheDecoder(nn.Module):
    """d2l's decoding strategy with d2lmini's modules, one new token per call: each block
    caches the inputs of its self-attention and projects keys and values of all of them again
    at every step."""

    def __init__(self, decoder: d2lmini.TransformerDecoder) -> None:
        super().__init__()
        self.decoder = decoder

    def init_state(self, enc_outputs, enc_valid_lens=None, reserve=0) -> InputCache:
        return InputCache(self.decoder.init_state(enc_outputs, enc_valid_lens),
                          [None] * self.decoder.num_layers)

    def forward(self, X: torch.Tensor, state: InputCache):
        dec = self.decoder
        x = dec.pos_encoding(dec.embedding(X) * math.sqrt(dec.num_hiddens), state.offset)
        for i, blk in enumerate(dec.blks):
            kv_in = x if state.inputs[i] is None else torch.cat([state.inputs[i], x], dim=1)
            state.inputs[i] = kv_in

            def self_attention(Z, att=blk.attention1, kv_in=kv_in):
                k, v = att.project_kv(kv_in, kv_in)  # every position, again
                return att.attend(att.split_heads(att.W_q(Z)), k, v)
            x = blk.residual1(x, self_attention)
            x = blk.residual2(x, lambda Z, blk=blk: blk.cross_attention(Z, state.source))
            x = blk.residual3(x, blk.ffn)
        state.offset += X.shape[1]
        return dec.dense(dec.final_norm(x)), state


def models(device) -> dict[str, tuple[nn.Module, dict]]:
    """The model and the greedy_search options of every way."""
    from .d2l_reference import d2l_transformer

    c = CONFIG
    sizes = (c["num_hiddens"], c["ffn_num_hiddens"], c["num_heads"], c["num_layers"],
             c["dropout"])
    torch.manual_seed(0)
    net = d2lmini.make_transformer(c["vocab"], c["vocab"], *sizes).to(device).eval()
    d2l_way = d2lmini.EncoderDecoder(net.encoder, InputCacheDecoder(net.decoder))
    ref = d2l_transformer(c["vocab"], c["vocab"], *sizes).to(device).eval()
    return {"kv_cache": (net, {}), "input_cache_d2l_way": (d2l_way, {}),
            "no_cache": (net, {"use_cache": False}), "d2l_reference": (ref, {})}


def run(args, device) -> dict:
    ways = models(device)
    lengths = [10, 50, 100] if args.quick else [10, 50, 100, 200]
    result = {"config": CONFIG, "by_batch_size": {}}
    for B in (1, 64):
        reps = 3 if (args.quick or B > 1) else 5
        X = torch.randint(4, CONFIG["vocab"], (B, CONFIG["src_len"]), device=device)
        valid = torch.full((B,), CONFIG["src_len"], device=device)

        def decode(name, n, X=X, valid=valid):
            model, options = ways[name]
            return d2lmini.greedy_search(model, X, valid, bos=BOS, eos=None, max_len=n,
                                         **options).tokens
        with d2lmini.store_attention_weights(ways["kv_cache"][0], False):
            tokens = {name: decode(name, 12) for name in ways if name != "d2l_reference"}
            same = all(torch.equal(tokens["kv_cache"], t) for t in tokens.values())
            print(f"[decode] batch {B}: the d2lmini ways agree on 12 tokens: {same}", flush=True)
            entry = result["by_batch_size"][str(B)] = {"batch_size": B, "reps": reps,
                                                       "same_tokens_check": same, "lengths": {}}
            for n in lengths:
                comp = {name: (lambda name=name, n=n: common.timed(lambda: decode(name, n), device))
                        for name in ways}
                for fn in comp.values():  # warm-up
                    fn()
                runs = common.interleave(comp, reps, f"[decode] batch {B}, {n} tokens")
                med = common.medians(runs)
                entry["lengths"][str(n)] = {
                    "seconds_per_batch": {k: common.summary(v) for k, v in runs.items()},
                    "ms_per_batch": {k: 1e3 * m for k, m in med.items()},
                    "ms_per_token": {k: 1e3 * m / n for k, m in med.items()},
                    "ratios": {f"{short}_over_kv_cache": med[way] / med["kv_cache"]
                               for short, way in RATIOS.items()}}
                common.write(sys.modules[__name__], result, device)
    result["ratios"] = {f"{k}_batch_{B}_at_100_tokens": v
                        for B, entry in result["by_batch_size"].items()
                        for k, v in entry["lengths"]["100"]["ratios"].items()}
    common.write(sys.modules[__name__], result, device)
    return result
