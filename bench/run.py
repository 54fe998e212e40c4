"""Benchmarks of d2lmini: training vs the d2l package, KV-cache decoding, attention paths,
book build. Not part of the test suite.

    python bench/run.py [--quick] [--only train|decode|attention|build|profile]

Each benchmark writes ``bench/results/<name>.json`` with the machine, the settings, every
repetition, the medians and the ratios. Competitors run in the same process, interleaved
(A, B, A, B, ...), and the median over the repetitions is reported. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")  # d2l draws with matplotlib: stay headless

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

import d2lmini  # noqa: E402
from d2lmini.attention import (keep_attention_weights, transpose_output,  # noqa: E402
                               transpose_qkv)
from d2lmini.transformer import _sublayer  # noqa: E402

ENGS = ["go .", "i lost .", "he's calm .", "i'm home ."]
FRAS = ["va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."]


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def machine_info(device: torch.device) -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cpu_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "device": str(device),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
            timeout=10).stdout.strip() or None
        info["git_dirty"] = bool(subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
            capture_output=True, text=True, timeout=10).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        info["git_commit"] = None
    return info


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn, device: torch.device) -> tuple[float, object]:
    sync(device)
    t0 = time.perf_counter()
    out = fn()
    sync(device)
    return time.perf_counter() - t0, out


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "reps": values}


def interleave(competitors: dict, reps: int, log: str = "") -> dict[str, list]:
    """Run ``competitors[name]()`` (each returns a number) A, B, A, B, ... ``reps`` times."""
    out: dict[str, list] = {name: [] for name in competitors}
    for r in range(reps):
        for name, fn in competitors.items():
            out[name].append(fn())
        print(f"  {log} rep {r + 1}/{reps}: " + ", ".join(
            f"{n}={v[-1]:.4g}" for n, v in out.items()), flush=True)
    return out


def write(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}", flush=True)
    return path


class _Quiet:
    """Swallow stdout (d2l's train_seq2seq prints a line, its Animator a figure repr)."""

    def __enter__(self):
        self._old = sys.stdout
        sys.stdout = open(os.devnull, "w")

    def __exit__(self, *exc):
        sys.stdout.close()
        sys.stdout = self._old


# ---------------------------------------------------------------------------------------------
# 1. training: d2lmini vs d2l 0.17.6
# ---------------------------------------------------------------------------------------------

SMALL = dict(num_hiddens=32, num_layers=2, num_heads=4, ffn_num_hiddens=64, dropout=0.1,
             batch_size=64, num_steps=10, lr=0.005, num_examples=600)
LARGE = dict(num_hiddens=256, num_layers=4, num_heads=8, ffn_num_hiddens=1024, dropout=0.1,
             batch_size=64, num_steps=32, lr=0.005, num_examples=600)


def _d2l_side():
    import d2l_reference as ref

    d2l = ref.d2l

    class NoAnimator:  # d2l's Animator redraws a figure every 10 epochs; not timed work
        def __init__(self, *a, **k):
            pass

        def add(self, *a, **k):
            pass

    d2l.Animator = NoAnimator
    return ref, d2l


def _make_nets(cfg, src_vocab, tgt_vocab):
    ref, _ = _d2l_side()
    ours = d2lmini.transformer(len(src_vocab), len(tgt_vocab), cfg["num_hiddens"],
                               cfg["ffn_num_hiddens"], cfg["num_heads"], cfg["num_layers"],
                               cfg["dropout"])
    theirs = ref.d2l_transformer(len(src_vocab), len(tgt_vocab), cfg["num_hiddens"],
                                 cfg["ffn_num_hiddens"], cfg["num_heads"], cfg["num_layers"],
                                 cfg["dropout"])
    return ours, theirs


def _train_once(which: str, cfg: dict, data, epochs: int, device, seed: int) -> dict:
    """Build a fresh model and train it for ``epochs`` epochs; returns tokens/s etc.

    Timed: the whole call of the library's own ``train_seq2seq`` (Xavier init, Adam,
    ``epochs`` passes over the data), wall clock, synchronised on GPU. d2l's Animator is
    replaced by a no-op and stdout is discarded. Tokens: the sum of the target valid
    lengths over all batches and epochs (what both libraries count).
    """
    train_iter, src_vocab, tgt_vocab, tokens_per_epoch = data
    _, d2l = _d2l_side()
    torch.manual_seed(seed)
    ours, theirs = _make_nets(cfg, src_vocab, tgt_vocab)
    if which == "d2lmini":
        fn = lambda: d2lmini.train_seq2seq(ours, train_iter, cfg["lr"], epochs, tgt_vocab,  # noqa: E731
                                           device, animate=False, progress=False)
        net = ours
    else:
        fn = lambda: d2l.train_seq2seq(theirs, train_iter, cfg["lr"], epochs, tgt_vocab,  # noqa: E731
                                       device)
        net = theirs
    with _Quiet():
        seconds, _ = timed(fn, device)
    del net
    return {"seconds": seconds, "tokens_per_sec": tokens_per_epoch * epochs / seconds}


def _load(cfg):
    with _Quiet():
        train_iter, src_vocab, tgt_vocab = d2lmini.load_data_nmt(
            cfg["batch_size"], cfg["num_steps"], num_examples=cfg["num_examples"])
    tokens = sum(int(b[3].sum()) for b in train_iter)
    return train_iter, src_vocab, tgt_vocab, tokens


def _throughput(cfg, epochs, reps, device, label):
    data = _load(cfg)
    print(f"[train/{label}] {epochs} epochs per repetition, {reps} repetitions, "
          f"{data[3]} target tokens per epoch", flush=True)
    _train_once("d2lmini", cfg, data, 1, device, 0)  # warm-up (allocator, kernels)
    _train_once("d2l", cfg, data, 1, device, 0)
    runs = {"d2lmini": [], "d2l": []}
    for r in range(reps):
        for which in ("d2lmini", "d2l") if r % 2 == 0 else ("d2l", "d2lmini"):
            runs[which].append(_train_once(which, cfg, data, epochs, device, r))
        print(f"  rep {r + 1}/{reps}: " + ", ".join(
            f"{w}={v[-1]['tokens_per_sec']:.0f} tok/s" for w, v in runs.items()), flush=True)
    tps = {w: summary([x["tokens_per_sec"] for x in v]) for w, v in runs.items()}
    return {
        "config": cfg, "epochs_per_rep": epochs, "reps": reps,
        "target_tokens_per_epoch": data[3],
        "order": "alternating: d2lmini, d2l, then d2l, d2lmini, ...",
        "tokens_per_sec": tps,
        "seconds": {w: [x["seconds"] for x in v] for w, v in runs.items()},
        "ratio_d2lmini_over_d2l": tps["d2lmini"]["median"] / tps["d2l"]["median"],
    }


def _converge(cfg, epochs, device):
    """Train each library once to convergence with its own loop; translate the 4 sentences
    with its own predict_seq2seq; score with d2lmini.bleu(k=2)."""
    data = _load(cfg)
    train_iter, src_vocab, tgt_vocab, _ = data
    _, d2l = _d2l_side()
    out = {"epochs": epochs}
    for which in ("d2lmini", "d2l"):
        torch.manual_seed(0)
        ours, theirs = _make_nets(cfg, src_vocab, tgt_vocab)
        t0 = time.perf_counter()
        with _Quiet():
            if which == "d2lmini":
                res = d2lmini.train_seq2seq(ours, train_iter, cfg["lr"], epochs, tgt_vocab,
                                            device, animate=False, progress=False)
                final_loss = res.losses[-1]
            else:
                d2l.train_seq2seq(theirs, train_iter, cfg["lr"], epochs, tgt_vocab, device)
                final_loss = None  # d2l's loop only prints it
        seconds = time.perf_counter() - t0
        rows = []
        for eng, fra in zip(ENGS, FRAS):
            if which == "d2lmini":
                tr, _ = d2lmini.predict_seq2seq(ours, eng, src_vocab, tgt_vocab,
                                                cfg["num_steps"], device)
            else:
                with torch.no_grad():
                    tr, _ = d2l.predict_seq2seq(theirs, eng, src_vocab, tgt_vocab,
                                                cfg["num_steps"], device)
            rows.append({"source": eng, "reference": fra, "translation": tr,
                         "bleu": d2lmini.bleu(tr, fra, k=2)})
            print(f"  [{which}] {eng} => {tr}, bleu {rows[-1]['bleu']:.3f}", flush=True)
        out[which] = {"seconds": seconds, "final_loss_per_token": final_loss,
                      "translations": rows,
                      "mean_bleu": statistics.mean(r["bleu"] for r in rows)}
    return out


def bench_train(args, device) -> dict:
    import d2l_reference as ref

    quick = args.quick
    result = {
        "benchmark": "train",
        "what": "training throughput (target tokens per second) of d2lmini.train_seq2seq "
                "on d2lmini.transformer vs d2l 0.17.6 train_seq2seq on d2l's Transformer "
                "(package encoder + the chapter's decoder, bench/d2l_reference.py); same data "
                "(d2lmini.load_data_nmt, fra-eng, first 600 pairs) and hyperparameters.",
        "timed": "wall clock of each library's own train_seq2seq call on a freshly built "
                 "model (Xavier init, Adam creation, all epochs); d2l's Animator replaced by "
                 "a no-op; stdout discarded; tokens = sum of target valid lengths",
        "d2l_version": getattr(ref.d2l, "__version__", None) or _d2l_version(),
        "stubbed_modules_for_d2l_import": ref.stubbed_modules,
        "notes": ["d2l's loop backpropagates the per-sequence mean loss summed over the "
                  "batch and syncs twice per batch (metric.add of tensors); d2lmini "
                  "normalises by the number of tokens. Both clip gradients to norm 1.",
                  "d2lmini trains with the fused attention kernel (no weights kept); d2l "
                  "materialises the scores and masks with sequence_mask",
                  "d2lmini cuts each batch to its longest source/target sentence before the "
                  "forward pass (d2l computes on all num_steps columns) and uses fused Adam "
                  "on CPU/CUDA; tokens counted are the same valid target tokens for both"],
    }
    result["small"] = _throughput(SMALL, 5 if quick else 15, 3 if quick else 5, device, "small")
    write("train", {"machine": machine_info(device), **result})
    result["large"] = _throughput(LARGE, 1 if quick else 2, 2 if quick else 3, device, "large")
    write("train", {"machine": machine_info(device), **result})
    if not quick:
        print("[train/convergence] 200 epochs each", flush=True)
        result["convergence"] = _converge(SMALL, 200, device)
    result["ratios"] = {
        "small_tokens_per_sec_d2lmini_over_d2l": result["small"]["ratio_d2lmini_over_d2l"],
        "large_tokens_per_sec_d2lmini_over_d2l": result["large"]["ratio_d2lmini_over_d2l"],
    }
    write("train", {"machine": machine_info(device), **result})
    return result


def _d2l_version():
    try:
        from importlib.metadata import version
        return version("d2l")
    except Exception:  # pragma: no cover
        return None


# ---------------------------------------------------------------------------------------------
# 2. decoding: projected-K/V cache vs d2l's input cache vs no cache
# ---------------------------------------------------------------------------------------------

def _decode_cache(net, state, bos, n):
    """(a) d2lmini's decoder: cache of projected keys/values, one new position per step."""
    dec = net.decoder
    X = torch.full((state["cross_kv"][0][0].shape[0] // dec.blks[0].attention1.num_heads, 1),
                   bos, dtype=torch.long, device=state["cross_kv"][0][0].device)
    out = []
    for _ in range(n):
        Y, state = dec(X, state)
        X = Y[:, -1:].argmax(-1)
        out.append(X)
    return torch.cat(out, 1)


def _decode_input_cache(net, state, bos, n):
    """(b) d2l's strategy with d2lmini's modules: cache each block's self-attention *input*
    and re-project K/V over every position at every step."""
    dec = net.decoder
    B = state["cross_kv"][0][0].shape[0] // dec.blks[0].attention1.num_heads
    X = torch.full((B, 1), bos, dtype=torch.long, device=state["cross_kv"][0][0].device)
    inputs = [None] * dec.num_layers
    out = []
    for t in range(n):
        x = dec.pos_encoding(dec.embedding(X) * math.sqrt(dec.num_hiddens), offset=t)
        for i, blk in enumerate(dec.blks):
            kv_in = x if inputs[i] is None else torch.cat([inputs[i], x], 1)
            inputs[i] = kv_in

            def self_att(Z, blk=blk, kv_in=kv_in):
                att = blk.attention1
                k, v = att.project_kv(kv_in, kv_in)  # every position, again
                return att.attend(transpose_qkv(att.W_q(Z), att.num_heads), k, v, None)

            x = _sublayer(x, blk.addnorm1, self_att, blk.norm_first)
            x = _sublayer(x, blk.addnorm2, lambda Z, blk=blk: blk.cross_attention(Z, state),
                          blk.norm_first)
            x = _sublayer(x, blk.addnorm3, blk.ffn, blk.norm_first)
        Y = dec.dense(dec.final_norm(x))
        X = Y[:, -1:].argmax(-1)
        out.append(X)
    return torch.cat(out, 1)


def _decode_no_cache(net, state, bos, n):
    """(c) no cache: rerun the decoder on the whole prefix at every step (the encoder's
    projected K/V are still computed once)."""
    dec = net.decoder
    B = state["cross_kv"][0][0].shape[0] // dec.blks[0].attention1.num_heads
    prefix = torch.full((B, 1), bos, dtype=torch.long, device=state["cross_kv"][0][0].device)
    for _ in range(n):
        fresh = dict(state, self_kv=[None] * dec.num_layers, num_steps=0)
        Y, _ = dec(prefix, fresh)
        prefix = torch.cat([prefix, Y[:, -1:].argmax(-1)], 1)
    return prefix[:, 1:]


def _decode_d2l_reference(ref_net, enc_X, enc_valid, bos, n):
    """(d) the d2l chapter's decoder itself (package modules), greedy, forced length."""
    enc_outputs = ref_net.encoder(enc_X, enc_valid)
    state = ref_net.decoder.init_state(enc_outputs, enc_valid)
    X = torch.full((enc_X.shape[0], 1), bos, dtype=torch.long, device=enc_X.device)
    out = []
    for _ in range(n):
        Y, state = ref_net.decoder(X, state)
        X = Y.argmax(-1)
        out.append(X)
    return torch.cat(out, 1)


def bench_decode(args, device) -> dict:
    import d2l_reference as ref

    cfg = dict(vocab=1000, num_hiddens=256, ffn_num_hiddens=1024, num_heads=8, num_layers=4,
               dropout=0.1, src_len=12)
    batch_sizes = [1, 64]  # one sentence (latency) and a batch of a test set (throughput)
    lengths = [10, 50, 100] if args.quick else [10, 50, 100, 200]
    torch.manual_seed(0)
    net = d2lmini.transformer(cfg["vocab"], cfg["vocab"], cfg["num_hiddens"],
                              cfg["ffn_num_hiddens"], cfg["num_heads"], cfg["num_layers"],
                              cfg["dropout"]).to(device).eval()
    ref_net = ref.d2l_transformer(cfg["vocab"], cfg["vocab"], cfg["num_hiddens"],
                                  cfg["ffn_num_hiddens"], cfg["num_heads"], cfg["num_layers"],
                                  cfg["dropout"]).to(device).eval()
    bos = 2
    ways = {"kv_cache": _decode_cache, "input_cache_d2l_way": _decode_input_cache,
            "no_cache": _decode_no_cache}
    result = {"benchmark": "decode",
              "what": "greedy decoding of a forced number of tokens (<eos> ignored) for a batch "
                      "of 1 sentence and of 64 sentences, random weights, eval mode, no_grad, "
                      "fused attention; time per batch includes the encoder and init_state",
              "ways": {"kv_cache": "d2lmini's TransformerDecoder: projected K/V cached",
                       "input_cache_d2l_way": "d2lmini's modules driven d2l's way: each "
                       "block's self-attention inputs cached, K/V re-projected each step",
                       "no_cache": "whole prefix re-run through the decoder each step",
                       "d2l_reference": "the d2l chapter's own decoder (package modules, "
                       "explicit attention); different code, shown for reference"},
              "config": cfg, "by_batch_size": {}}
    for B in batch_sizes:
        reps = 3 if (args.quick or B > 1) else 5
        enc_X = torch.randint(4, cfg["vocab"], (B, cfg["src_len"]), device=device)
        enc_valid = torch.full((B,), cfg["src_len"], device=device)
        entry = result["by_batch_size"][str(B)] = {"batch_size": B, "reps": reps,
                                                   "lengths": {}}
        with torch.no_grad(), keep_attention_weights(net, False):
            # the three strategies give the same tokens (same weights, eval mode)
            enc = net.encoder(enc_X, enc_valid)
            toks = {k: f(net, net.decoder.init_state(enc, enc_valid), bos, 12)
                    for k, f in ways.items()}
            same = all(torch.equal(toks["kv_cache"], t) for t in toks.values())
            entry["same_tokens_check"] = same
            print(f"[decode] batch {B}: the three strategies agree on 12 tokens: {same}",
                  flush=True)

            for n in lengths:
                def make(f):
                    def run():
                        def go():
                            e = net.encoder(enc_X, enc_valid)
                            return f(net, net.decoder.init_state(e, enc_valid), bos, n)
                        return timed(go, device)[0]
                    return run
                comp = {k: make(f) for k, f in ways.items()}
                comp["d2l_reference"] = lambda: timed(
                    lambda: _decode_d2l_reference(ref_net, enc_X, enc_valid, bos, n), device)[0]
                for fn in comp.values():  # warm-up
                    fn()
                runs = interleave(comp, reps, log=f"[decode] batch {B}, {n} tokens")
                med = {k: statistics.median(v) for k, v in runs.items()}
                entry["lengths"][str(n)] = {
                    "seconds_per_batch": {k: summary(v) for k, v in runs.items()},
                    "ms_per_batch": {k: 1e3 * m for k, m in med.items()},
                    "ms_per_token": {k: 1e3 * m / n for k, m in med.items()},
                    "ratios": {
                        "input_cache_over_kv_cache": med["input_cache_d2l_way"] / med["kv_cache"],
                        "no_cache_over_kv_cache": med["no_cache"] / med["kv_cache"],
                        "d2l_reference_over_kv_cache": med["d2l_reference"] / med["kv_cache"],
                    },
                }
                write("decode", {"machine": machine_info(device), **result})
    result["ratios"] = {}
    for B, entry in result["by_batch_size"].items():
        key = "100" if "100" in entry["lengths"] else max(entry["lengths"], key=int)
        result["ratios"].update({f"{k}_batch_{B}_at_{key}_tokens": v
                                 for k, v in entry["lengths"][key]["ratios"].items()})
    write("decode", {"machine": machine_info(device), **result})
    return result


# ---------------------------------------------------------------------------------------------
# 3. attention: explicit (scores materialised) vs fused scaled_dot_product_attention
# ---------------------------------------------------------------------------------------------

class _PeakRSS:
    """Peak resident set size above the starting value during a ``with`` block (CPU).

    On Linux the kernel's high-water mark is reset by writing 5 to /proc/self/clear_refs and
    read back from VmHWM in /proc/self/status (exact, page granularity). Elsewhere a thread
    samples the RSS every ~0.5 ms with psutil (approximate; short peaks can be missed).
    """

    def __init__(self):
        self.method = "linux_vmhwm" if self._linux_ok() else "psutil_sampling"

    @staticmethod
    def _linux_ok():
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            return "VmHWM" in Path("/proc/self/status").read_text()
        except OSError:
            return False

    @staticmethod
    def _status(key):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
        raise KeyError(key)

    def __enter__(self):
        if self.method == "linux_vmhwm":
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.base = self._status("VmRSS")
            return self
        import psutil
        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        self._stop = False

        def loop():
            while not self._stop:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                time.sleep(0.0005)
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        if self.method == "linux_vmhwm":
            self.delta = self._status("VmHWM") - self.base
            return
        self.peak = max(self.peak, self.proc.memory_info().rss)
        self._stop = True
        self.thread.join()
        self.delta = self.peak - self.base


def _malloc_trim():
    """Give the free memory of glibc's heap back to the OS before a measurement, so that
    new allocations show up in the RSS (Linux/glibc only; best effort)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _release_freed_memory_to_os():
    """glibc keeps freed blocks below a dynamic mmap threshold on its heap, so later
    allocations do not raise the RSS; a fixed 64 KiB threshold makes every large tensor a
    fresh mmap that is returned on free (Linux/glibc only; best effort)."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        M_MMAP_THRESHOLD = -3
        return bool(libc.mallopt(M_MMAP_THRESHOLD, 64 * 1024))
    except (OSError, AttributeError):
        return False


def _mha_fused_3d(mha, X):
    """The fused path as d2lmini called it before it switched to 4-D tensors: the same weights
    and result as ``mha(X, X, X)`` (no mask, eval), but SDPA sees 3-D ``(B*h, L, d_h)``
    inputs, for which PyTorch only runs its math kernel."""
    h = mha.num_heads
    W = torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight])
    q, k, v = (transpose_qkv(t, h)
               for t in torch.nn.functional.linear(X, W).chunk(3, dim=-1))
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return mha.W_o(transpose_output(out, h))


def _sdpa_kernel(q, k, v):
    """Name of the SDPA backend PyTorch would choose (private API; None if unavailable)."""
    try:
        choice = int(torch._fused_sdp_choice(q, k, v))
        from torch.nn.attention import SDPBackend
        return SDPBackend(choice).name
    except Exception:  # pragma: no cover - private API
        return None


def bench_attention(args, device) -> dict:
    d, h, B = 256, 8, 1
    lengths = [128, 256, 512, 1024] if args.quick else [128, 256, 512, 1024, 2048, 4096]
    reps = 3 if args.quick else 5
    torch.manual_seed(0)
    mha = d2lmini.MultiHeadAttention(d, h, dropout=0.0).to(device).eval()
    paths = {"explicit": True, "fused": False, "fused_3d": "fused_3d"}
    result = {"benchmark": "attention",
              "what": "MultiHeadAttention forward, self-attention, no mask, eval, no_grad: "
                      "explicit path (keep_weights=True: bmm scores, masked_softmax, bmm) vs "
                      "fused path (keep_weights=False: F.scaled_dot_product_attention on 4-D "
                      "(B, h, L, d_h) tensors) vs fused_3d (same weights, SDPA on 3-D "
                      "(B*h, L, d_h) tensors, as d2lmini called it before)",
              "timed": "phase 1: each path's forward, interleaved, median of reps (default "
                       "allocator); phase 2: one extra call per path and length for the "
                       "peak memory",
              "config": {"num_hiddens": d, "num_heads": h, "batch_size": B},
              "reps": reps, "memory_method": None, "lengths": {}}

    def caller(L, path):
        X = torch.randn(B, L, d, device=device)
        mha.keep_weights = paths[path] is True
        if path == "fused_3d":
            return lambda: _mha_fused_3d(mha, X)
        return lambda: mha(X, X, X)

    def clear():
        mha.attention_weights = None
        mha.attention.attention_weights = None
        gc.collect()

    with torch.no_grad():
        X = torch.randn(B, 64, d, device=device)
        mha.keep_weights = False
        q = torch.randn(B * h, 64, d // h, device=device)
        result["sdpa_kernel"] = {
            "fused (4-D (B, h, L, d_h) inputs, as d2lmini passes them)":
                _sdpa_kernel(*(q.view(B, h, 64, -1),) * 3),
            "fused_3d ((B*h, L, d_h) inputs)": _sdpa_kernel(q, q, q)}
        result["fused_3d_max_abs_diff"] = float(
            (mha(X, X, X) - _mha_fused_3d(mha, X)).abs().max())
    print(f"[attention] SDPA kernels: {result['sdpa_kernel']}", flush=True)

    # phase 1: time
    for L in lengths:
        def comp(path):
            def run():
                call = caller(L, path)
                with torch.no_grad():
                    t, _ = timed(call, device)
                clear()
                return t
            return run
        competitors = {p: comp(p) for p in paths}
        for fn in competitors.values():
            fn()  # warm-up
        runs = interleave(competitors, reps, log=f"[attention] L={L}")
        med = {k: statistics.median(v) for k, v in runs.items()}
        result["lengths"][str(L)] = {
            "seconds": {k: summary(v) for k, v in runs.items()},
            "ms": {k: 1e3 * m for k, m in med.items()},
            "peak_bytes": {k: None for k in paths},
            "score_tensor_bytes_theoretical": B * h * L * L * 4,  # one float32 (B*h, L, L)
            "ratio_explicit_over_fused_time": med["explicit"] / med["fused"],
            "ratio_fused_3d_over_fused_time": med["fused_3d"] / med["fused"],
        }
        write("attention", {"machine": machine_info(device), **result})

    # phase 2: peak memory of one call
    if device.type == "cuda":
        result["memory_method"] = ("cuda: torch.cuda.max_memory_allocated during the call "
                                   "minus memory_allocated before")
    else:
        fixed = _release_freed_memory_to_os()
        probe = _PeakRSS()
        if probe.method == "linux_vmhwm":
            method = ("cpu: peak RSS increase during the call (VmHWM after resetting it via "
                      "/proc/self/clear_refs)")
        else:
            try:
                import psutil  # noqa: F401
                method = "cpu: peak RSS increase, sampled every ~0.5 ms (psutil)"
            except ImportError:
                method = None
        if method:
            method += ("; glibc mmap threshold fixed at 64 KiB and malloc_trim before each "
                       "call" if fixed else
                       "; the allocator may reuse memory, so the delta can understate")
        result["memory_method"] = method
    if result["memory_method"]:
        for L in lengths:
            for path in paths:
                call = caller(L, path)
                with torch.no_grad():
                    if device.type == "cuda":
                        torch.cuda.empty_cache()
                        torch.cuda.reset_peak_memory_stats(device)
                        before = torch.cuda.memory_allocated(device)
                        call()
                        sync(device)
                        mem = torch.cuda.max_memory_allocated(device) - before
                    else:
                        _malloc_trim()
                        with _PeakRSS() as m:
                            call()
                        mem = m.delta
                clear()
                result["lengths"][str(L)]["peak_bytes"][path] = mem
    mha.keep_weights = True
    result["ratios"] = {f"explicit_over_fused_time_L{L}": v["ratio_explicit_over_fused_time"]
                        for L, v in result["lengths"].items()}
    result["ratios"].update({f"fused_3d_over_fused_time_L{L}": v["ratio_fused_3d_over_fused_time"]
                             for L, v in result["lengths"].items()})
    write("attention", {"machine": machine_info(device), **result})
    return result


# ---------------------------------------------------------------------------------------------
# 4. book build
# ---------------------------------------------------------------------------------------------

def bench_build(args, device) -> dict:
    import shutil

    build_dir = ROOT / "_build"
    if build_dir.exists():  # "from clean": no Sphinx environment, no jupyter cache
        print(f"[build] removing {build_dir} to start from clean", flush=True)
        shutil.rmtree(build_dir)
    runs = []
    for label, cmd in (("clean", [sys.executable, "tools/build_book.py", "-q"]),
                       ("warm_no_changes", [sys.executable, "tools/build_book.py", "-q"])):
        print(f"[build] {label}: {' '.join(cmd[1:])}", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        runs.append({"run": label, "command": " ".join(["python"] + cmd[1:]),
                     "seconds": seconds, "returncode": proc.returncode,
                     "output_tail": (proc.stdout + proc.stderr)[-2000:]})
        print(f"  {seconds:.1f} s, exit {proc.returncode}", flush=True)
    result = {"benchmark": "build",
              "what": "wall clock of tools/build_book.py (both editions, every chapter "
                      "executed): first from clean (_build/ removed: no Sphinx environment, "
                      "no jupyter cache), then again with no changes",
              "runs": runs,
              "ratios": {"clean_over_warm": runs[0]["seconds"] / runs[1]["seconds"]}}
    write("build", {"machine": machine_info(device), **result})
    return result


# ---------------------------------------------------------------------------------------------
# profile of one d2lmini training epoch (small config)
# ---------------------------------------------------------------------------------------------

def bench_profile(args, device) -> dict:
    from torch.profiler import ProfilerActivity, profile

    data = _load(SMALL)
    train_iter, src_vocab, tgt_vocab, _ = data
    torch.manual_seed(0)
    net, _ = _make_nets(SMALL, src_vocab, tgt_vocab)
    with _Quiet():
        d2lmini.train_seq2seq(net, train_iter, SMALL["lr"], 2, tgt_vocab, device,
                              animate=False, progress=False)  # warm-up
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts) as prof, _Quiet():
        d2lmini.train_seq2seq(net, train_iter, SMALL["lr"], 3, tgt_vocab, device,
                              init=False, animate=False, progress=False)
    rows = []
    for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:25]:
        rows.append({"op": e.key, "calls": e.count,
                     "self_cpu_ms": e.self_cpu_time_total / 1e3,
                     "cpu_total_ms": e.cpu_time_total / 1e3})
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25)
    print(table)
    result = {"benchmark": "profile", "what": "torch.profiler over 3 epochs of "
              "d2lmini.train_seq2seq, small config (30 steps)", "config": SMALL,
              "top_self_cpu": rows}
    write("profile", {"machine": machine_info(device), **result})
    return result


BENCHES = {"train": bench_train, "decode": bench_decode, "attention": bench_attention,
           "build": bench_build, "profile": bench_profile}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer repetitions and sizes; skips the 200-epoch convergence runs")
    p.add_argument("--only", choices=sorted(BENCHES), action="append",
                   help="run only this benchmark (repeatable); default: train, decode, "
                        "attention (build and profile only when named)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    args = p.parse_args(argv)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    names = args.only or ["train", "decode", "attention"]
    for name in names:
        t0 = time.perf_counter()
        BENCHES[name](args, device)
        print(f"[{name}] done in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
