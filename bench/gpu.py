"""The GPU job's benchmarks (part c of tools/gpu/job.py), each interleaved, written to one JSON
file after every benchmark. (1) Training tokens per second, one optimiser step at a time on
the same random batch of token ids: d2lmini.make_transformer (d2lmini.seq2seq_step) against
torch.nn.Transformer of the same configuration (embeddings, post-norm layers, the output
layer; a plain step: cross-entropy, backward, clipping, Adam), bf16 autocast on a GPU; and
bench/train.py's d2lmini against d2l 0.17.6 (the 'large' configuration) when d2l imports.
(2) MultiHeadAttention forward, explicit against fused (bench/attention.py's calls), time and
peak memory, up to L = 16384. (3) Batched greedy decoding of forced tokens with the KV cache
against rerunning the prefix (d2lmini.greedy_search). --tiny: small sizes, seconds on a CPU.

    python -m bench.gpu --out gpu_bench.json [--tiny] [--seconds 110]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from torch import nn

import d2lmini

from . import attention, common, memory

BASE = dict(num_hiddens=512, ffn_num_hiddens=2048, num_heads=8, num_layers=6, dropout=0.1,
            vocab=10_000, batch_size=128, length=32, reps=5)
TINY = dict(num_hiddens=32, ffn_num_hiddens=64, num_heads=2, num_layers=2, dropout=0.1,
            vocab=200, batch_size=8, length=10, reps=2)


class TorchTransformer(nn.Module):
    """``torch.nn.Transformer`` with embeddings and an output layer, the sizes of ``cfg``."""

    def __init__(self, cfg: dict) -> None:
        super().__init__()
        d = cfg["num_hiddens"]
        self.src_embed, self.tgt_embed = (nn.Embedding(cfg["vocab"], d) for _ in range(2))
        self.core = nn.Transformer(d, cfg["num_heads"], cfg["num_layers"], cfg["num_layers"],
                                   cfg["ffn_num_hiddens"], cfg["dropout"], batch_first=True)
        self.out = nn.Linear(d, cfg["vocab"])

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], device=tgt.device)
        return self.out(self.core(self.src_embed(src), self.tgt_embed(tgt), tgt_mask=mask,
                                  tgt_is_causal=True))


def batch(cfg: dict, device) -> tuple:
    torch.manual_seed(0)
    B, L = cfg["batch_size"], cfg["length"]
    X, Y = (torch.randint(4, cfg["vocab"], (B, L), device=device) for _ in range(2))
    lengths = torch.full((B,), L, device=device)
    return X, lengths, Y, lengths


def steppers(cfg: dict, device) -> dict:
    """``{name: one training step}`` for d2lmini and torch.nn.Transformer on the same batch."""
    data, amp = batch(cfg, device), device.type == "cuda"
    sizes = [cfg[k] for k in ("num_hiddens", "ffn_num_hiddens", "num_heads", "num_layers",
                              "dropout")]
    ours = d2lmini.make_transformer(cfg["vocab"], cfg["vocab"], *sizes).to(device).train()
    ours_opt = d2lmini.make_adam(ours, 1e-4, device)
    loss = d2lmini.MaskedSoftmaxCELoss()
    theirs = TorchTransformer(cfg).to(device).train()
    theirs_opt = torch.optim.Adam(theirs.parameters(), 1e-4)
    X, _, Y, _ = data
    dec_in = torch.cat([torch.full_like(Y[:, :1], 1), Y[:, :-1]], 1)

    def torch_step():
        with torch.autocast(device.type, torch.bfloat16, enabled=amp):
            logits = theirs(X, dec_in)
        out = nn.functional.cross_entropy(logits.float().transpose(1, 2), Y)
        theirs_opt.zero_grad(set_to_none=True)
        out.backward()
        nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        theirs_opt.step()

    return {"d2lmini": lambda: d2lmini.seq2seq_step(ours, data, loss, ours_opt, 1, device,
                                                   amp=amp),
            "torch_nn_transformer": torch_step}


def training(cfg: dict, device, steps: int) -> dict:
    """Tokens per second of ``steps`` training steps of each model, interleaved."""
    step = steppers(cfg, device)
    for fn in step.values():  # warm-up
        fn()
    tokens = cfg["batch_size"] * cfg["length"] * steps
    runs = common.interleave(
        {name: (lambda fn=fn: tokens / common.timed(lambda: [fn() for _ in range(steps)],
                                                   device)) for name, fn in step.items()},
        cfg["reps"], "[gpu/train] tokens/s", alternate=True)
    med = common.medians(runs)
    return {"config": cfg, "steps_per_rep": steps, "bf16_autocast": device.type == "cuda",
            "tokens_per_sec": {k: common.summary(v) for k, v in runs.items()},
            "ratio_d2lmini_over_torch": med["d2lmini"] / med["torch_nn_transformer"]}


def against_d2l(device, tiny: bool) -> dict:
    """bench/train.py's throughput, d2lmini against d2l 0.17.6, or why it did not run."""
    try:
        from . import train
        return train.throughput(train.SMALL if tiny else train.LARGE, 1 if tiny else 2,
                                1 if tiny else 3, device, "gpu")
    except Exception as e:  # d2l 0.17.6 may not import on this Python: say so, go on
        return {"error": f"{type(e).__name__}: {e}"[:500]}


def attention_paths(lengths: list[int], device, deadline: float) -> dict:
    """Explicit against fused attention: median ms (interleaved) and peak memory per length."""
    torch.manual_seed(0)
    mha = d2lmini.MultiHeadAttention(attention.D, attention.HEADS, dropout=0.0).to(device)
    out = {"config": {"num_hiddens": attention.D, "num_heads": attention.HEADS,
                      "batch_size": attention.B}, "lengths": {},
           "memory_method": memory.method(device)}
    with torch.inference_mode():
        for L in lengths:
            if time.monotonic() > deadline:
                out["stopped_before"] = L
                break
            paths = {p: c for p, c in attention.calls(mha.eval(), L, device).items()
                     if p in ("explicit", "fused")}
            runs = common.interleave({p: (lambda c=c: attention.seconds(c, device))
                                      for p, c in paths.items()}, 3, f"[gpu/attention] L={L}")
            med = common.medians(runs)
            peak = {p: memory.peak_bytes(c, device) if out["memory_method"] else None
                    for p, c in paths.items()}
            mha.attention_weights = mha.attention.attention_weights = None
            out["lengths"][str(L)] = {"ms": {p: 1e3 * m for p, m in med.items()},
                                      "peak_bytes": peak,
                                      "ratio_explicit_over_fused_time":
                                          med["explicit"] / med["fused"]}
    return out


def decoding(cfg: dict, device, lengths: list[int]) -> dict:
    """Greedy decoding of a batch, forced to ``n`` tokens, with and without the KV cache."""
    sizes = [cfg[k] for k in ("num_hiddens", "ffn_num_hiddens", "num_heads", "num_layers",
                              "dropout")]
    torch.manual_seed(0)
    net = d2lmini.make_transformer(cfg["vocab"], cfg["vocab"], *sizes).to(device).eval()
    X, valid, _, _ = batch(cfg, device)

    def decode(n, cache):
        return d2lmini.greedy_search(net, X, valid, bos=1, eos=None, max_len=n,
                                     use_cache=cache).tokens
    out = {"batch_size": cfg["batch_size"], "lengths": {},
           "same_tokens": bool(torch.equal(decode(8, True), decode(8, False)))}
    for n in lengths:
        runs = common.interleave({w: (lambda c=c, n=n: common.timed(lambda: decode(n, c),
                                                                    device))
                                  for w, c in (("kv_cache", True), ("no_cache", False))},
                                 cfg["reps"], f"[gpu/decode] {n} tokens")
        med = common.medians(runs)
        out["lengths"][str(n)] = {"ms_per_token": {w: 1e3 * m / n for w, m in med.items()},
                                  "ratio_no_cache_over_kv_cache":
                                      med["no_cache"] / med["kv_cache"]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--seconds", type=float, default=110, help="stop the attention sweep then")
    args = ap.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    deadline, cfg = time.monotonic() + args.seconds, TINY if args.tiny else BASE
    record = {"machine": common.machine_info(device), "benchmark": "gpu",
              "what": " ".join(__doc__.split("\n\n")[0].split())}
    jobs = [("training", lambda: training(cfg, device, 2 if args.tiny else 20)),
            ("decoding", lambda: decoding(dict(cfg, batch_size=64), device,
                                          [8, 16] if args.tiny else [32, 128])),
            ("attention", lambda: attention_paths(
                [64, 128] if args.tiny else [1024, 4096, 8192, 16384], device, deadline)),
            ("against_d2l", lambda: against_d2l(device, args.tiny))]
    for name, job in jobs:
        tic = time.perf_counter()
        record[name] = job()
        record[name]["seconds"] = time.perf_counter() - tic
        args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"[gpu/bench] {name} done in {record[name]['seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
