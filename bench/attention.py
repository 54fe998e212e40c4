"""MultiHeadAttention forward (self-attention, no mask, batch 1, d 256, 8 heads, eval,
inference mode) for lengths 128 to 4096 (1024 with --quick): the explicit path
(store_attention_weights=True: bmm scores, masked_softmax, bmm; the weights are stored) against
the fused path (store_attention_weights=False, the default: F.scaled_dot_product_attention on
4-D (B, h, L, d_h) tensors), and
fused_3d, a design record: the same weights and result with SDPA on 3-D (B*h, L, d_h) tensors,
the way d2lmini called it before it kept the heads as an axis of their own (PyTorch runs
only its reference math kernel for 3-D inputs). Phase 1 times the three paths interleaved
with torch.utils.benchmark (each repetition is the median of a blocked_autorange measurement;
the median over repetitions is reported); phase 2 measures the peak memory of one extra call
each (bench/memory.py). score_tensor_bytes_theoretical is one float32 (B*h, L, L) tensor;
sdpa_kernel records which SDPA backend PyTorch picks for each input layout."""

from __future__ import annotations

import gc
import sys

import torch
import torch.utils.benchmark as benchmark

import d2lmini

from . import common, memory

D, HEADS, B = 256, 8, 1


def fused_3d(mha: d2lmini.MultiHeadAttention, X: torch.Tensor) -> torch.Tensor:
    """The design record: ``mha(X, X, X)`` (no mask, eval) with SDPA on 3-D inputs."""
    h = mha.num_heads
    W = torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight])
    q, k, v = (d2lmini.transpose_qkv(t, h)
               for t in torch.nn.functional.linear(X, W).chunk(3, dim=-1))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return mha.W_o(d2lmini.transpose_output(out, h))


def sdpa_kernel(q, k, v) -> str | None:
    """The SDPA backend PyTorch would choose (a private API; None where unavailable)."""
    try:
        from torch.nn.attention import SDPBackend
        return SDPBackend(int(torch._fused_sdp_choice(q, k, v))).name
    except Exception:  # pragma: no cover - private API
        return None


def calls(mha, L: int, device) -> dict:
    """One forward of each path on a fresh input of length L."""
    X = torch.randn(B, L, D, device=device)

    def path(keep: bool):
        def call():
            mha.store_attention_weights = keep
            return mha(X, X, X)
        return call
    return {"explicit": path(True), "fused": path(False), "fused_3d": lambda: fused_3d(mha, X)}


def seconds(call, device) -> float:
    """The median time of one call, measured by torch.utils.benchmark."""
    common.sync(device)
    timer = benchmark.Timer(stmt="call(); sync()", globals={
        "call": call, "sync": lambda: common.sync(device)})
    return timer.blocked_autorange(min_run_time=0.2).median


def run(args, device) -> dict:
    lengths = [128, 256, 512, 1024] + ([] if args.quick else [2048, 4096])
    reps = 3 if args.quick else 5
    torch.manual_seed(0)
    mha = d2lmini.MultiHeadAttention(D, HEADS, dropout=0.0).to(device).eval()
    this = sys.modules[__name__]
    result = {"config": {"num_hiddens": D, "num_heads": HEADS, "batch_size": B}, "reps": reps,
              "lengths": {}}
    with torch.inference_mode():
        q = torch.randn(B * HEADS, 64, D // HEADS, device=device)
        result["sdpa_kernel"] = {
            "fused (4-D (B, h, L, d_h) inputs, as d2lmini passes them)":
                sdpa_kernel(*(q.view(B, HEADS, 64, -1),) * 3),
            "fused_3d ((B*h, L, d_h) inputs)": sdpa_kernel(q, q, q)}
        paths = calls(mha, 64, device)
        result["fused_3d_max_abs_diff"] = float(
            (paths["fused"]() - paths["fused_3d"]()).abs().max())
        for L in lengths:  # phase 1: time
            paths = calls(mha, L, device)
            runs = common.interleave(
                {p: (lambda c=c: seconds(c, device)) for p, c in paths.items()},
                reps, f"[attention] L={L}")
            med = common.medians(runs)
            result["lengths"][str(L)] = {
                "seconds": {p: common.summary(v) for p, v in runs.items()},
                "ms": {p: 1e3 * m for p, m in med.items()},
                "peak_bytes": {p: None for p in paths},
                "score_tensor_bytes_theoretical": B * HEADS * L * L * 4,
                "ratio_explicit_over_fused_time": med["explicit"] / med["fused"],
                "ratio_fused_3d_over_fused_time": med["fused_3d"] / med["fused"]}
            common.write(this, result, device)
        result["memory_method"] = memory.method(device)
        for L in lengths if result["memory_method"] else []:  # phase 2: peak memory
            for p, call in calls(mha, L, device).items():
                result["lengths"][str(L)]["peak_bytes"][p] = memory.peak_bytes(call, device)
                mha.attention_weights = mha.attention.attention_weights = None
                gc.collect()
    mha.store_attention_weights = True
    result["ratios"] = {f"{name}_time_L{L}": v[f"ratio_{name}_time"]
                        for name in ("explicit_over_fused", "fused_3d_over_fused")
                        for L, v in result["lengths"].items()}
    common.write(this, result, device)
    return result
