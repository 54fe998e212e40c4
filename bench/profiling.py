"""torch.profiler (CPU, and CUDA when present) over 3 epochs (30 steps) of
d2lmini.train_seq2seq in chapter 6's configuration, after 2 epochs of warm-up: the 25
operators with the most self CPU time. Only with --only profiling."""

from __future__ import annotations

import sys

import torch
from torch.profiler import ProfilerActivity, profile

import d2lmini

from . import common
from .train import SMALL, load


def run(args, device) -> dict:
    train_iter, src_vocab, tgt_vocab, _ = load(SMALL)
    torch.manual_seed(0)
    net = d2lmini.make_transformer(len(src_vocab), len(tgt_vocab), **SMALL["model"])
    options = dict(animate=False, progress=False)
    with common.quiet():
        d2lmini.train_seq2seq(net, train_iter, SMALL["lr"], 2, tgt_vocab, device, **options)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda"
                                           else [])
    with profile(activities=activities) as prof, common.quiet():
        d2lmini.train_seq2seq(net, train_iter, SMALL["lr"], 3, tgt_vocab, device, init=False,
                              **options)
    events = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:25]
    rows = [{"op": e.key, "calls": e.count, "self_cpu_ms": e.self_cpu_time_total / 1e3,
             "cpu_total_ms": e.cpu_time_total / 1e3} for e in events]
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
    result = {"config": SMALL, "top_self_cpu": rows}
    common.write(sys.modules[__name__], result, device)
    return result
