"""Train a Transformer on all of English–French (fra-eng) and report held-out sacreBLEU.

One process::

    python scripts/train_full.py --epochs 20 --out results.json

Data-parallel on N GPUs (the global batch, and so the result, does not depend on N)::

    torchrun --nproc_per_node 4 scripts/train_full.py --epochs 20 --out results.json

With ``--checkpoint ckpt.pt`` a checkpoint is written after every epoch and the same command
resumes from it. ``--tiny`` is a smoke configuration that finishes in seconds on a CPU.

The GPU job (``tools/gpu/job.py``, part a) runs it in one process with chapter 6's token-budget
batches (``--max-tokens``), the average of the last epochs' weights (``--average-last``), beam
search and the model-FLOPs utilisation (``--mfu``: ``FlopCounterMode`` FLOPs of one training step
over the measured time, against the device's dense bf16 peak).

The held-out split is chapter 6's (``split_held_out(..., normalise=True,
drop_seen_targets=True)``): whole English sentences, grouped after normalisation, are held out
with every translation as a reference, and a held-out sentence one of whose translations is a
training target is dropped.
The data come from ``d2lmini.read_data_nmt`` (``D2LMINI_DATA_DIR``, the cache, a download, or
the small corpus shipped in the package; the source is printed and recorded).
"""

from __future__ import annotations

import argparse
import collections
import copy
import dataclasses
import json
import logging
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout
import d2lmini as d2l  # noqa: E402

RESERVED = ["<pad>", "<bos>", "<eos>"]
TINY = dict(max_examples=2000, epochs=2, num_hiddens=32, ffn_num_hiddens=64, num_heads=2,
            num_layers=2, batch_size=64, num_steps=10, warmup=50)
# Dense (no sparsity) bf16 tensor-core peak in TFLOP/s. H200 SXM: NVIDIA's H200 datasheet
# (nvidia.com/en-us/data-center/h200, "BF16 Tensor Core 1,979 TFLOPS", footnoted "with
# sparsity"): dense is half, 989.5; the H100 SXM datasheet gives the same figure (the same GH100
# chip and clocks). A100: its datasheet's 312 TFLOPS (624 with sparsity).
PEAK_BF16_TFLOPS = {"H200": 989.5, "H100": 989.5, "A100": 312.0}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--max-minutes", type=float, default=None,
                   help="stop training after the epoch that would exceed this budget")
    p.add_argument("--max-examples", type=int, default=None,
                   help="use the first N pairs of fra.txt (the shortest; default all)")
    p.add_argument("--tiny", action="store_true", help="smoke configuration (CPU, seconds)")
    p.add_argument("--audit", type=Path, default=None, metavar="RECORD",
                   help="train nothing: re-create the split of a recorded run from the data and "
                        "write into RECORD how many of its held-out sentences chapter 6's "
                        "standard would not accept")
    p.add_argument("--out", type=Path, default=Path("results.json"))
    p.add_argument("--checkpoint", type=Path, default=None,
                   help="checkpoint file, written every epoch; the run resumes from it")
    p.add_argument("--no-resume", action="store_true", help="ignore an existing checkpoint")
    p.add_argument("--num-hiddens", type=int, default=512)
    p.add_argument("--ffn-num-hiddens", type=int, default=2048)
    p.add_argument("--num-heads", type=int, default=8)
    p.add_argument("--num-layers", type=int, default=6)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=512, help="global batch (sentences)")
    p.add_argument("--num-steps", type=int, default=20,
                   help="tokens per sentence incl. <eos>; longer training pairs are dropped")
    p.add_argument("--warmup", type=int, default=1000, help="warm-up steps of the schedule")
    p.add_argument("--bleu-examples", type=int, default=None,
                   help="evaluate on the first N held-out pairs (default all)")
    p.add_argument("--beam-size", type=int, default=1,
                   help="1: greedy search; more: beam search (GNMT length penalty, alpha 0.6)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--amp", choices=["auto", "on", "off"], default="auto",
                   help="bf16 autocast (auto: on CUDA)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="chapter 6's token-budget batches (d2l.BucketSampler) of at most N "
                        "tokens per side instead of --batch-size sentences (one process only)")
    p.add_argument("--average-last", type=int, default=0,
                   help="evaluate the average of the last K epochs' weights (one process only)")
    p.add_argument("--mfu", action="store_true",
                   help="count one training step's FLOPs (FlopCounterMode) for the MFU")
    args = p.parse_args(argv)
    if args.tiny:
        for key, value in TINY.items():
            if p.get_default(key) == getattr(args, key):  # explicit options still win
                setattr(args, key, value)
    return args


def load_pairs(max_examples: int | None) -> tuple[list, list, str]:
    """All (or the first ``max_examples``) tokenized pairs, and where they came from."""
    logger = logging.getLogger("d2lmini")
    level = logger.level
    logger.setLevel(logging.WARNING)  # every rank reads; rank 0 says it
    try:
        text, data_source = d2l.read_data_nmt(return_source=True)
    finally:
        logger.setLevel(level)  # a caller's own logging is left as it was (the tests)
    source, target = d2l.tokenize_nmt(d2l.preprocess_nmt(text), max_examples)
    return source, target, str(data_source)


SPLIT = ("d2lmini.split_held_out(test_fraction=0.02, seed=0, normalise=True, "
         "drop_seen_targets=True)")


def held_out_split(source: list, target: list, test_fraction: float = 0.02,
                   seed: int = 0) -> tuple[list, list, list, list]:
    """Chapter 6's split, ``d2l.split_held_out(normalise=True, drop_seen_targets=True)``:
    ``test_fraction`` of the English sentences, grouped after normalisation (*i'm fine .* and
    *i am fine !* together), held out with all their translations as references, so that no
    held-out sentence is trained on in any of its forms; a held-out sentence one of whose
    translations is a training target is dropped. Returns ``(train_src, train_tgt, test_src,
    test_refs)``, ``test_refs[i]`` the list of token lists of ``test_src[i]``'s translations."""
    split = d2l.split_held_out(source, target, test_fraction, seed=seed, normalise=True,
                               drop_seen_targets=True)
    return split.train_source, split.train_target, split.test_source, split.test_references


OLD_SPLIT = "d2lmini.split_held_out(test_fraction=0.02, seed=0)"  # runs recorded before the fix


def audit_held_out(train_src: list, train_tgt: list, test_src: list, test_refs: list) -> dict:
    """How many held-out sentences chapter 6's standard would not accept: trained on in another
    form (the same :func:`d2lmini.normalise_source` key as a training source), or with a
    reference that is verbatim a training target; ``either`` counts each sentence once."""
    trained = {d2l.normalise_source(s) for s in train_src}
    targets = {tuple(t) for t in train_tgt}
    other_form = [d2l.normalise_source(s) in trained for s in test_src]
    seen = [any(tuple(r) in targets for r in refs) for refs in test_refs]
    return {"test_sentences": len(test_src), "trained_in_another_form": sum(other_form),
            "reference_is_a_training_target": sum(seen),
            "either": sum(a or b for a, b in zip(other_form, seen))}


def git_commit() -> str | None:
    """The repository's HEAD, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def audit_record(path: Path) -> dict:
    """Re-create the split a recorded run used (its ``split`` field: :data:`SPLIT` or
    :data:`OLD_SPLIT`) from the same data, and write :func:`audit_held_out`'s counts into the
    record as ``held_out_audit``."""
    record = json.loads(path.read_text(encoding="utf-8"))
    source, target, data_source = load_pairs(record["config"].get("max_examples"))
    if record["split"] == SPLIT:
        split = held_out_split(source, target)
    elif record["split"] == OLD_SPLIT:
        split = d2l.split_held_out(source, target, 0.02, seed=0)
    else:
        raise ValueError(f"{path}: unknown split {record['split']!r}")
    audit = audit_held_out(*split)
    if audit["test_sentences"] != record["num_test"]:
        raise ValueError(f"{path}: the re-created split holds out {audit['test_sentences']} "
                         f"sentences, the record {record['num_test']} (other data?)")
    record["held_out_audit"] = dict(audit, data_source=str(data_source), audited_at=git_commit())
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return record["held_out_audit"]


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return platform.processor() or platform.machine() or "cpu"


def prepare_data(args: argparse.Namespace, say, world_size: int, device: torch.device) -> dict:
    """The pairs split by :func:`held_out_split`, the training pairs that fit ``num_steps``, the
    vocabularies and the padded arrays: ``{train_src, test_src, test_refs, src_vocab,
    tgt_vocab, arrays, data_source, num_pairs}``."""
    source, target, data_source = load_pairs(args.max_examples)
    say(f"[d2lmini] {data_source}", flush=True)
    train_src, train_tgt, test_src, test_refs = held_out_split(source, target)
    audit = audit_held_out(train_src, train_tgt, test_src, test_refs)
    keep = [i for i, (s, t) in enumerate(zip(train_src, train_tgt))
            if len(s) < args.num_steps and len(t) < args.num_steps]  # + <eos> fits
    train_src, train_tgt = [train_src[i] for i in keep], [train_tgt[i] for i in keep]
    src_vocab = d2l.Vocab(train_src, min_freq=2, reserved_tokens=RESERVED)
    tgt_vocab = d2l.Vocab(train_tgt, min_freq=2, reserved_tokens=RESERVED)
    arrays = (*d2l.build_array_nmt(train_src, src_vocab, args.num_steps),
              *d2l.build_array_nmt(train_tgt, tgt_vocab, args.num_steps))
    say(f"{len(source)} pairs: {len(train_src)} for training (pairs longer than "
        f"{args.num_steps - 1} tokens dropped), {len(test_src)} English sentences held out "
        f"with all their translations; vocabularies "
        f"{len(src_vocab)} (en) and {len(tgt_vocab)} (fr); world size {world_size} on "
        f"{device_name(device)}", flush=True)
    return dict(train_src=train_src, test_src=test_src, test_refs=test_refs,
                src_vocab=src_vocab, tgt_vocab=tgt_vocab, arrays=arrays,
                data_source=data_source, num_pairs=len(source), audit=audit)


def peak_tflops(device: torch.device) -> tuple[float | None, str]:
    """The device's dense bf16 peak (TFLOP/s) from :data:`PEAK_BF16_TFLOPS`, and its name."""
    name = device_name(device)
    for key, value in PEAK_BF16_TFLOPS.items():
        if device.type == "cuda" and key in name:
            return value, f"{key} dense bf16 (scripts/train_full.py PEAK_BF16_TFLOPS)"
    return None, f"no dense bf16 peak known for {name}"


def step_flops(net, batch, tgt_vocab, recipe, device: torch.device) -> tuple[int, int]:
    """FLOPs of one training step (forward and backward, ``FlopCounterMode``) on ``batch``,
    counted on a copy of ``net`` (its weights are left alone), and the batch's target tokens."""
    from torch.utils.flop_counter import FlopCounterMode

    probe = copy.deepcopy(net).to(device).train()
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.0)
    loss = d2l.MaskedSoftmaxCELoss(recipe.label_smoothing)
    counter = FlopCounterMode(display=False)
    with counter:
        d2l.seq2seq_step(probe, batch, loss, optimizer, tgt_vocab["<bos>"], device,
                         amp=recipe.amp)
    return counter.get_total_flops(), int(batch[3].sum())


def make_recipe(args: argparse.Namespace, amp: bool) -> d2l.TrainConfig:
    return d2l.TrainConfig(  # chapter 6's recipe (sec-training-translation-real)
        num_epochs=args.epochs, lr=1.0, betas=(0.9, 0.98), eps=1e-9,
        warmup_steps=args.warmup, num_hiddens=args.num_hiddens,
        label_smoothing=args.label_smoothing, smoothing_skips_pad=True, amp=amp,
        seed=args.seed)


def fit_token_batches(args, net, data: dict, recipe, device: torch.device, say):
    """One process, chapter 6's way: ``d2l.BucketSampler`` batches of at most
    ``--max-tokens`` tokens per side; the last ``--average-last`` epochs' weights are kept.
    Returns ``(result, averaged weights or None, number averaged, first batch)``."""
    X, X_len, Y, Y_len = data["arrays"]
    sampler = d2l.BucketSampler(X_len, Y_len, args.max_tokens, seed=args.seed)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, X_len, Y, Y_len),
                                         batch_sampler=sampler)
    last = collections.deque(maxlen=max(args.average_last, 1))
    trainer = d2l.Trainer(net, data["tgt_vocab"], recipe, device)
    checkpointer = None if args.checkpoint is None else d2l.Checkpointer(args.checkpoint)
    result = trainer.fit(
        loader, checkpointer=checkpointer, resume=not args.no_resume, log=say,
        on_epoch=lambda epoch, _: last.append(
            {k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()}),
        max_seconds=None if args.max_minutes is None else args.max_minutes * 60)
    averaged = d2l.average_checkpoints(list(last)) if args.average_last > 1 and last else None
    return result, averaged, len(last) if averaged is not None else 0, next(iter(loader))


def train(args: argparse.Namespace, data: dict, device: torch.device, say, world_size: int):
    """Chapter 6's model and recipe trained on ``data``: ``(net, recipe, result, amp,
    extras)``, ``extras`` the number of averaged epochs and the FLOPs of one step."""
    torch.manual_seed(args.seed)
    net = d2l.make_transformer(len(data["src_vocab"]), len(data["tgt_vocab"]), args.num_hiddens,
                               args.ffn_num_hiddens, args.num_heads, args.num_layers,
                               args.dropout)
    # resolved once, for training and for the evaluation
    amp = device.type == "cuda" if args.amp == "auto" else args.amp == "on"
    recipe, extras = make_recipe(args, amp), {"averaged_epochs": 0}
    if (args.max_tokens or args.average_last > 1) and world_size > 1:
        raise SystemExit("--max-tokens and --average-last run in one process (no torchrun)")
    if args.max_tokens:
        result, averaged, extras["averaged_epochs"], batch = fit_token_batches(
            args, net, data, recipe, device, say)
        if averaged is not None:
            net.load_state_dict(averaged)
    else:
        result = d2l.train_seq2seq_ddp(
            net, data["arrays"], data["tgt_vocab"], recipe, global_batch_size=args.batch_size,
            device=device, checkpoint_path=args.checkpoint, resume=not args.no_resume,
            seed=args.seed, log=say,
            max_seconds=None if args.max_minutes is None else args.max_minutes * 60)
        batch = [a[:args.batch_size] for a in data["arrays"]]
    if args.mfu:  # after training: the count's copy of the model costs no training time
        extras["step_flops"], extras["step_target_tokens"] = step_flops(
            net, batch, data["tgt_vocab"], recipe, device)
    return net, recipe, result, amp, extras


def mfu_summary(extras: dict, result, device: torch.device) -> dict:
    """Model-FLOPs utilisation: the FLOPs per target token of a counted step times the target
    tokens per second of training, over the device's dense bf16 peak (``None`` when unknown).
    The step's FLOPs are the matrix products as executed on one batch, padding included, so
    batches that pad more count work the model did not need."""
    if "step_flops" not in extras:
        return {}
    per_token = extras["step_flops"] / max(extras["step_target_tokens"], 1)
    peak, source = peak_tflops(device)
    achieved = per_token * result.tokens_per_sec / 1e12
    return {"flops_per_target_token": per_token, "achieved_tflops": achieved,
            "peak_tflops": peak, "peak_source": source,
            "mfu": None if peak is None else achieved / peak}


def evaluate(args: argparse.Namespace, net, data: dict, device: torch.device, amp: bool):
    """Held-out sacreBLEU and chrF of ``net`` (every translation a reference): ``(bleu, chrf,
    predictions, number of sentences, seconds)``."""
    test_src, test_refs = data["test_src"], data["test_refs"]
    n_eval = len(test_src) if args.bleu_examples is None else min(args.bleu_examples,
                                                                  len(test_src))
    tic = time.perf_counter()
    preds = d2l.translate(net, test_src[:n_eval], data["src_vocab"], data["tgt_vocab"],
                          args.num_steps, device, beam_size=args.beam_size, amp=amp)
    hyps = [" ".join(p) for p in preds]
    refs = [[" ".join(t) for t in r] for r in test_refs[:n_eval]]
    bleu = d2l.corpus_bleu(hyps, refs, pair="fra-eng")  # sacreBLEU, 0-100, chapter 6's
    chrf = d2l.corpus_chrf(hyps, refs, pair="fra-eng")
    return bleu, chrf, preds, n_eval, time.perf_counter() - tic


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    if args.audit is not None:
        audit = audit_record(args.audit)
        print(f"{args.audit}: {audit['either']} of {audit['test_sentences']} held-out sentences "
              f"fail chapter 6's standard ({audit['trained_in_another_form']} trained on in "
              f"another form, {audit['reference_is_a_training_target']} with a reference that "
              f"is a training target)")
        return audit
    rank, world_size, device = d2l.setup_distributed()
    say = print if rank == 0 else (lambda *a, **k: None)
    torch.set_float32_matmul_precision("high")
    try:
        data = prepare_data(args, say, world_size, device)
        net, recipe, result, amp, extras = train(args, data, device, say, world_size)
    finally:
        d2l.cleanup_distributed()  # only rank 0 goes on, to evaluate
    if rank != 0:
        return {}
    bleu, chrf, preds, n_eval, eval_seconds = evaluate(args, net, data, device, amp)
    search = "greedy" if args.beam_size == 1 else f"beam {args.beam_size}"
    print(f"held-out sacreBLEU {bleu.score:.1f} on {n_eval} sentences ({search}, every "
          f"translation a reference, {eval_seconds:.1f} s; {bleu.signature}); "
          f"chrF {chrf.score:.1f}")
    config = {key: getattr(args, key) for key in (
        "num_hiddens", "ffn_num_hiddens", "num_heads", "num_layers", "dropout",
        "label_smoothing", "batch_size", "num_steps", "warmup", "epochs", "max_minutes",
        "max_examples", "seed", "amp", "beam_size", "max_tokens", "average_last")}
    test_src, test_refs = data["test_src"], data["test_refs"]
    summary = {
        "device": device_name(device), "torch": torch.__version__, "world_size": world_size,
        "machine": f"{world_size} x {device_name(device)}, torch {torch.__version__}",
        "recipe": dataclasses.asdict(recipe),
        "config": config, "data_source": data["data_source"],
        "num_train": len(data["train_src"]),
        "num_test": len(test_src), "num_test_references": sum(map(len, test_refs)),
        "split": SPLIT, "held_out_audit": data["audit"], "git_commit": git_commit(),
        "epochs": len(result.losses), "losses": result.losses,
        "seconds": result.seconds, "tokens_per_sec": result.tokens_per_sec,
        "bleu": bleu.score, "bleu_signature": bleu.signature, "bleu_examples": n_eval,
        "chrf": chrf.score, "chrf_signature": chrf.signature,
        "averaged_epochs": extras["averaged_epochs"], **mfu_summary(extras, result, device),
        "eval_seconds": eval_seconds,
        "samples": [{"en": " ".join(s), "pred": " ".join(p),
                     "fr": list(dict.fromkeys(" ".join(t) for t in refs))}  # each once
                    for s, refs, p in zip(test_src[:5], test_refs[:5], preds[:5])],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    print(f"wrote {args.out}")
    return summary


if __name__ == "__main__":
    main()
