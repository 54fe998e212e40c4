"""Training throughput: target tokens per second of d2lmini.train_seq2seq on
d2lmini.make_transformer against d2l 0.17.6's train_seq2seq on d2l's Transformer (the
package's encoder and EncoderDecoder with the chapter's decoder, bench/d2l_reference.py), on
the same data (d2lmini.load_data_nmt, fra-eng, first 600 pairs) and hyperparameters. Timed:
the wall clock of each library's own train_seq2seq call on a freshly built model (Xavier
initialisation, Adam, all epochs), interleaved and alternating which library goes first,
after one warm-up run each; d2l's Animator is replaced by a no-op and stdout is discarded.
Tokens: the sum of the target valid lengths over all batches and epochs, what both loops
count. 'small' is chapter 6's configuration, 'large' a wider and longer one. 'convergence'
(not with --quick) trains each library 200 epochs once with its own loop and translates the
four test sentences with its own predict_seq2seq (BLEU with d2lmini.bleu, k=2); its seconds
are single runs, not a throughput measurement. Differences between the loops: d2l
backpropagates the per-sentence mean loss summed over the batch and synchronises twice per
batch; d2lmini normalises by the number of tokens, trains with the fused attention kernel
(SDPA, is_causal for the decoder's self-attention), cuts each batch to its longest sentences
and uses PyTorch's fused Adam. Both clip gradients to norm 1."""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import torch

import d2lmini

from . import common

SMALL = dict(model=dict(num_hiddens=32, ffn_num_hiddens=64, num_heads=4, num_layers=2,
                        dropout=0.1),
             batch_size=64, num_steps=10, lr=0.005, num_examples=600)
LARGE = dict(model=dict(num_hiddens=256, ffn_num_hiddens=1024, num_heads=8, num_layers=4,
                        dropout=0.1),
             batch_size=64, num_steps=32, lr=0.005, num_examples=600)
ENGS = ["go .", "i lost .", "he's calm .", "i'm home ."]
FRAS = ["va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."]


def d2l_library():
    """d2l 0.17.6 with its Animator replaced by a no-op (it redraws a figure: not timed work)."""
    from . import d2l_reference

    class NoAnimator:
        def __init__(self, *args, **kwargs):
            pass

        def add(self, *args, **kwargs):
            pass

    d2l_reference.d2l.Animator = NoAnimator
    return d2l_reference


def load(cfg: dict) -> tuple:
    with common.quiet():
        train_iter, src_vocab, tgt_vocab = d2lmini.load_data_nmt(
            cfg["batch_size"], cfg["num_steps"], num_examples=cfg["num_examples"])
    tokens = sum(int(d2lmini.Seq2SeqBatch(*b).tgt_len.sum()) for b in train_iter)
    return train_iter, src_vocab, tgt_vocab, tokens


def build(which: str, cfg: dict, src_vocab, tgt_vocab) -> torch.nn.Module:
    """A freshly initialised model of one library."""
    if which == "d2lmini":
        return d2lmini.make_transformer(len(src_vocab), len(tgt_vocab), **cfg["model"])
    m = cfg["model"]
    return d2l_library().d2l_transformer(len(src_vocab), len(tgt_vocab), m["num_hiddens"],
                                         m["ffn_num_hiddens"], m["num_heads"],
                                         m["num_layers"], m["dropout"])


def train(which: str, net, cfg: dict, data: tuple, epochs: int, device) -> Any:
    """Each library's own training loop (stdout discarded)."""
    train_iter, _, tgt_vocab, _ = data
    with common.quiet():
        if which == "d2lmini":
            return d2lmini.train_seq2seq(net, train_iter, cfg["lr"], epochs, tgt_vocab, device,
                                         animate=False, progress=False)
        return d2l_library().d2l.train_seq2seq(net, train_iter, cfg["lr"], epochs, tgt_vocab,
                                               device)


def throughput(cfg: dict, epochs: int, reps: int, device, label: str) -> dict:
    data = load(cfg)
    print(f"[train/{label}] {epochs} epochs per repetition, {reps} repetitions, {data[3]} "
          "target tokens per epoch", flush=True)

    def once(which: str, epochs: int) -> float:  # tokens per second of one training run
        torch.manual_seed(0)
        net = build(which, cfg, data[1], data[2])
        return data[3] * epochs / common.timed(
            lambda: train(which, net, cfg, data, epochs, device), device)

    for which in ("d2lmini", "d2l"):  # warm-up (allocator, kernels)
        once(which, 1)
    runs = common.interleave({w: (lambda w=w: once(w, epochs)) for w in ("d2lmini", "d2l")},
                             reps, f"[train/{label}] tokens/s", alternate=True)
    tps = {w: common.summary(v) for w, v in runs.items()}
    return {"config": cfg, "epochs_per_rep": epochs, "reps": reps,
            "target_tokens_per_epoch": data[3],
            "order": "alternating: d2lmini, d2l, then d2l, d2lmini, ...",
            "tokens_per_sec": tps,
            "seconds": {w: [data[3] * epochs / x for x in v] for w, v in runs.items()},
            "ratio_d2lmini_over_d2l": tps["d2lmini"]["median"] / tps["d2l"]["median"]}


def converge(cfg: dict, epochs: int, device) -> dict:
    """Each library trains once to convergence and translates the four sentences."""
    data = load(cfg)
    _, src_vocab, tgt_vocab, _ = data
    out: dict = {"epochs": epochs}
    for which in ("d2lmini", "d2l"):
        torch.manual_seed(0)
        net = build(which, cfg, src_vocab, tgt_vocab)
        tic = time.perf_counter()
        result = train(which, net, cfg, data, epochs, device)
        seconds = time.perf_counter() - tic
        predict = (d2lmini.predict_seq2seq if which == "d2lmini"
                   else d2l_library().d2l.predict_seq2seq)
        rows = []
        for eng, fra in zip(ENGS, FRAS):
            with torch.no_grad():
                translation, _ = predict(net, eng, src_vocab, tgt_vocab, cfg["num_steps"],
                                         device)
            rows.append({"source": eng, "reference": fra, "translation": translation,
                         "bleu": d2lmini.bleu(translation, fra, k=2)})
            print(f"  [{which}] {eng} => {translation}, bleu {rows[-1]['bleu']:.3f}", flush=True)
        out[which] = {"seconds": seconds, "translations": rows,
                      "final_loss_per_token": result.losses[-1] if result else None,
                      "mean_bleu": statistics.mean(r["bleu"] for r in rows)}
    return out


def run(args, device) -> dict:
    from importlib.metadata import version

    ref = d2l_library()
    result = {"d2l_version": version("d2l"),
              "stubbed_modules_for_d2l_import": ref.stubbed_modules}
    result["small"] = throughput(SMALL, 5 if args.quick else 15, 3 if args.quick else 5,
                                 device, "small")
    common.write(sys.modules[__name__], result, device)
    result["large"] = throughput(LARGE, 1 if args.quick else 2, 2 if args.quick else 3,
                                 device, "large")
    common.write(sys.modules[__name__], result, device)
    if not args.quick:
        print("[train/convergence] 200 epochs each", flush=True)
        result["convergence"] = converge(SMALL, 200, device)
    result["ratios"] = {f"{size}_tokens_per_sec_d2lmini_over_d2l":
                        result[size]["ratio_d2lmini_over_d2l"] for size in ("small", "large")}
    common.write(sys.modules[__name__], result, device)
    return result
