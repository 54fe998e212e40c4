"""Chapter 6's recipe, one switch at a time, measured on chapter 6's model (chapter 7 and the
subword section of chapter 6 show this record). Data, split, model and recipe are those of
chapter 6's sec-training-translation-real: the first ``num_examples`` fra-eng pairs whose sides
are both shorter than ``num_steps`` tokens, split with d2lmini.split_held_out(dev_fraction,
test_fraction, normalise=True, drop_seen_targets=True), vocabularies from the training pairs
(min_freq 2), a d 128, 2-layer, 4-head Transformer trained ``num_epochs`` epochs with Adam (0.9,
0.98, 1e-9), the paper's schedule (``warmup_steps``, factor ``lr_factor``), label smoothing 0.1
without <pad>, gradient clipping to norm 1, batches of at most ``max_tokens`` tokens per side
from d2lmini.BucketSampler, and the last ``num_checkpoints`` snapshots averaged.

Arms, each trained with every seed of ``seeds`` (the seed sets the initial weights, the batch
order and dropout):
  baseline    chapter 6's recipe.
  no_warmup   the same schedule without its warm-up (``warmup_steps=1``): identical rates after
              step ``warmup_steps``, larger before (the rate of step 1 is sqrt(warmup_steps)
              times the peak of the baseline's schedule).
  padded      shuffled batches of ``padded_batch`` sentences (as many batches per epoch as the
              bucketed baseline has, within one), each trimmed to its longest sentence, instead
              of length-bucketed token batches.
  bpe_shared  a joint BPE vocabulary of ``bpe_vocab`` subwords (Hugging Face ``tokenizers``,
              trained on the training pairs of both languages) with one embedding matrix for
              source and target, tied to the output layer (share_embeddings, tie_output).

Decoding settings are compared on the baseline's models: the averaged and the final weights,
beam size 1, 4 and 8, and the length penalty's alpha (GNMT) 0, 0.6 and 1. Scores are corpus
sacreBLEU (d2lmini.corpus_bleu(pair="fra-eng"), every translation a reference) on the dev
sentences; the test sentences are scored once per model, with the kept setting (averaged weights,
beam 4, alpha 0.6). For each comparison 'comparisons' holds the mean paired difference over the
seeds, its 95% t-interval and the verdict of d2lmini.compare (on BLEU with its sign turned, so
'better' means a higher BLEU). 'padding' counts, per arm, the share of source and of target
tokens in one epoch's trimmed batches that are <pad>; 'tokens_per_sec' is target tokens (without
padding) per second of training, measured beside other trainings; 'throughput' measures the
same for bucketed and padded batches interleaved on one thread (medians, and their ratio), the
number to read for speed. '<unk>' rates: the share of the dev sentences' source tokens and
of their references' tokens that the arm's vocabulary maps to <unk>."""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import torch

import d2lmini

from . import common

CONFIG = dict(num_examples=40000, dev_fraction=0.02, test_fraction=0.02, num_steps=16,
              max_tokens=1024, num_hiddens=128, ffn_num_hiddens=512, num_heads=4,
              num_layers=2, dropout=0.1, lr_factor=0.7, warmup_steps=400, num_epochs=4,
              label_smoothing=0.1, num_checkpoints=5, split_seed=0, seeds=(0, 1, 2),
              bpe_vocab=4000)
ARMS = ("baseline", "no_warmup", "padded", "bpe_shared")
RESERVED = ["<pad>", "<bos>", "<eos>"]
BEAMS = (1, 4, 8)
ALPHAS = (0.0, 0.6, 1.0)
EOW = "</w>"  # BPE's end-of-word mark


def load(cfg: dict) -> dict:
    """Chapter 6's pairs and split (the words; each arm makes its own vocabulary)."""
    with common.quiet():
        text = d2lmini.read_data_nmt()
    source, target = d2lmini.tokenize_nmt(d2lmini.preprocess_nmt(text))
    n, steps = cfg["num_examples"], cfg["num_steps"]
    pairs = [(s, t) for s, t in zip(source[:n], target[:n]) if len(s) < steps and len(t) < steps]
    split = d2lmini.split_held_out(
        [s for s, _ in pairs], [t for _, t in pairs], test_fraction=cfg["test_fraction"],
        seed=cfg["split_seed"], dev_fraction=cfg["dev_fraction"], normalise=True,
        drop_seen_targets=True)
    return {"split": split}


def train_bpe(train_src: list, train_tgt: list, vocab_size: int):
    """A joint BPE model of both languages' training sentences (already word-tokenised)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(unk_token="<unk>", end_of_word_suffix=EOW))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.BPEDecoder(suffix=EOW)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>", *RESERVED],
                                  end_of_word_suffix=EOW, show_progress=False)
    tok.train_from_iterator([" ".join(s) for s in train_src] + [" ".join(t) for t in train_tgt],
                            trainer)
    return tok


def subwords(tok, sentences: list) -> list:
    return [tok.encode(s, is_pretokenized=True).tokens for s in sentences]


def from_subwords(tokens: list) -> list:
    """BPE tokens back to words: a word ends at every token that carries the end-of-word mark."""
    return "".join(tokens).replace(EOW, " ").split()


def prepare(arm: str, cfg: dict, data: dict, seed: int) -> dict:
    """The arm's vocabularies, training arrays, loader and held-out inputs."""
    split = data["split"]
    tr_s, tr_t = split.train_source, split.train_target
    dev_s, test_s = split.dev_source, split.test_source
    out = {"dev_refs": [[" ".join(t) for t in r] for r in split.dev_references],
           "test_refs": [[" ".join(t) for t in r] for r in split.test_references]}
    if arm == "bpe_shared":
        tok = train_bpe(tr_s, tr_t, cfg["bpe_vocab"])
        tr_s, tr_t = subwords(tok, tr_s), subwords(tok, tr_t)
        dev_s, test_s = subwords(tok, dev_s), subwords(tok, test_s)
        vocab = d2lmini.Vocab(tr_s + tr_t, min_freq=1, reserved_tokens=RESERVED)
        src_vocab = tgt_vocab = vocab
        ref_tokens = subwords(tok, [r for refs in split.dev_references for r in refs])
        num_steps = max(len(x) for x in tr_s + tr_t) + 1  # every training pair fits
        options = dict(share_embeddings=True, tie_output=True)
    else:
        src_vocab = d2lmini.Vocab(tr_s, min_freq=2, reserved_tokens=RESERVED)
        tgt_vocab = d2lmini.Vocab(tr_t, min_freq=2, reserved_tokens=RESERVED)
        ref_tokens = [r for refs in split.dev_references for r in refs]
        num_steps, options = cfg["num_steps"], {}
    unk = lambda seqs, vocab: (sum(vocab[t] == vocab["<unk>"] for s in seqs for t in s)  # noqa: E731
                               / max(sum(map(len, seqs)), 1))
    X, X_len = d2lmini.build_array_nmt(tr_s, src_vocab, num_steps)
    Y, Y_len = d2lmini.build_array_nmt(tr_t, tgt_vocab, num_steps)
    sampler = d2lmini.BucketSampler(X_len, Y_len, max(cfg["max_tokens"], num_steps),
                                    seed=seed)
    out.update(src_vocab=src_vocab, tgt_vocab=tgt_vocab, num_steps=num_steps, options=options,
               dev_src=dev_s, test_src=test_s, arrays=(X, X_len, Y, Y_len), sampler=sampler,
               unk_rate_source=unk(dev_s, src_vocab), unk_rate_reference=unk(ref_tokens, tgt_vocab),
               vocab_sizes=(len(src_vocab), len(tgt_vocab)))
    return out


def loader(arm: str, prep: dict, seed: int):
    dataset = torch.utils.data.TensorDataset(*prep["arrays"])
    if arm != "padded":
        return torch.utils.data.DataLoader(dataset, batch_sampler=prep["sampler"])
    batches = len(prep["sampler"])
    size = -(-len(dataset) // batches)  # as many batches per epoch as the bucketed loader
    return torch.utils.data.DataLoader(dataset, batch_size=size, shuffle=True,
                                       generator=torch.Generator().manual_seed(seed))


def padding_share(data_iter) -> tuple[float, float]:
    """The share of <pad> among the source and the target tokens of one epoch's batches, each
    batch trimmed to its longest sentence (as training trims it)."""
    real = [0, 0]
    total = [0, 0]
    for _, X_len, _, Y_len in data_iter:
        for i, lens in enumerate((X_len, Y_len)):
            real[i] += int(lens.sum())
            total[i] += len(lens) * int(lens.max())
    return tuple(1 - r / t for r, t in zip(real, total))


def run_job(job: dict) -> dict:
    """Train one arm with one seed and score it."""
    torch.set_num_threads(1)
    cfg, arm, seed = job["config"], job["arm"], job["seed"]
    prep = prepare(arm, cfg, load(cfg), seed)
    data_iter = loader(arm, prep, seed)
    pad_src, pad_tgt = padding_share(data_iter)
    d2lmini.set_seed(seed)
    net = d2lmini.make_transformer(*prep["vocab_sizes"], cfg["num_hiddens"],
                                   cfg["ffn_num_hiddens"], cfg["num_heads"], cfg["num_layers"],
                                   cfg["dropout"], **prep["options"])
    recipe = d2lmini.TrainConfig(
        num_epochs=cfg["num_epochs"], lr=cfg["lr_factor"], betas=(0.9, 0.98), eps=1e-9,
        warmup_steps=1 if arm == "no_warmup" else cfg["warmup_steps"],
        num_hiddens=cfg["num_hiddens"], label_smoothing=cfg["label_smoothing"],
        smoothing_skips_pad=True, num_snapshots=cfg["num_checkpoints"], seed=seed)
    result = d2lmini.Trainer(net, prep["tgt_vocab"], recipe, "cpu").fit(data_iter)
    final = {k: v.clone() for k, v in net.state_dict().items()}
    words = from_subwords if arm == "bpe_shared" else (lambda tokens: tokens)

    def bleu(sources, refs, beam, alpha):
        out = d2lmini.translate(net, sources, prep["src_vocab"], prep["tgt_vocab"],
                                prep["num_steps"], "cpu", beam_size=beam,
                                max_len=lambda n: n + 50, penalty="gnmt", alpha=alpha)
        return d2lmini.corpus_bleu([" ".join(words(t)) for t in out], refs, pair="fra-eng")

    scores: dict[str, float] = {}
    net.eval()
    with torch.no_grad():
        net.load_state_dict(final)
        scores["final_beam4"] = bleu(prep["dev_src"], prep["dev_refs"], 4, 0.6).score
        net.load_state_dict(result.averaged)
        for beam in BEAMS:
            scores[f"avg_beam{beam}"] = bleu(prep["dev_src"], prep["dev_refs"], beam, 0.6).score
        if arm == "baseline":
            for alpha in ALPHAS:
                if alpha != 0.6:
                    scores[f"avg_beam4_alpha{alpha:g}"] = bleu(
                        prep["dev_src"], prep["dev_refs"], 4, alpha).score
        test = bleu(prep["test_src"], prep["test_refs"], 4, 0.6)
    return {"arm": arm, "seed": seed, "dev_bleu": scores, "test_bleu": test.score,
            "signature": test.signature, "steps": result.steps, "seconds": result.seconds,
            "tokens_per_sec": result.tokens_per_sec, "final_loss": result.losses[-1],
            "losses": result.losses, "padding_source": pad_src, "padding_target": pad_tgt,
            "unk_rate_source": prep["unk_rate_source"],
            "unk_rate_reference": prep["unk_rate_reference"],
            "vocab_sizes": prep["vocab_sizes"], "num_steps": prep["num_steps"],
            "parameters": d2lmini.num_parameters(net),
            "num_train": len(prep["arrays"][0]), "num_dev": len(prep["dev_src"]),
            "num_test": len(prep["test_src"])}


def _per_seed(runs: list, arm: str, key) -> list[float]:
    return [key(r) for r in sorted((r for r in runs if r["arm"] == arm), key=lambda r: r["seed"])]


def comparisons(runs: list) -> dict:
    """Paired over seeds: ``arm - baseline`` in dev BLEU (and decoding settings on the baseline's
    models), each with d2lmini.compare's interval and verdict ('better': higher BLEU)."""
    def compare(base, other, what):
        c = d2lmini.compare([-b for b in base], [-o for o in other])
        return {"what": what, "baseline": base, "arm": other, "mean_difference": -c.diff,
                "half_width": c.half_width, "verdict": c.verdict, "seeds": c.n}
    dev = lambda key: (lambda r: r["dev_bleu"][key])  # noqa: E731
    base = _per_seed(runs, "baseline", dev("avg_beam4"))
    out = {}
    for arm in ARMS[1:]:
        out[arm] = compare(base, _per_seed(runs, arm, dev("avg_beam4")),
                           f"{arm} against the baseline, dev BLEU (averaged weights, beam 4)")
    out["bpe_shared_test"] = compare(_per_seed(runs, "baseline", lambda r: r["test_bleu"]),
        _per_seed(runs, "bpe_shared", lambda r: r["test_bleu"]),
        "bpe_shared against the baseline, test BLEU (averaged weights, beam 4)")
    b = lambda key: _per_seed(runs, "baseline", dev(key))  # noqa: E731
    out["averaging"] = compare(b("final_beam4"), base,
                               "averaged against final weights (beam 4), dev BLEU")
    out["beam4_vs_greedy"] = compare(b("avg_beam1"), base,
                                     "beam 4 against greedy search (averaged weights)")
    out["beam8_vs_beam4"] = compare(base, b("avg_beam8"),
                                    "beam 8 against beam 4 (averaged weights)")
    for alpha in ALPHAS:
        if alpha != 0.6:
            out[f"alpha{alpha:g}_vs_0.6"] = compare(base, b(f"avg_beam4_alpha{alpha:g}"),
                f"alpha {alpha:g} against 0.6 (beam 4, averaged weights)")
    return out


def throughput(cfg: dict, rounds: int = 7, steps: int = 20) -> dict:
    """Target tokens (without padding) per second of training steps, bucketed token batches
    against padded sentence batches, interleaved: ``rounds`` alternations of ``steps`` steps
    each, on one thread, from the same freshly initialised model; medians and their ratio."""
    torch.set_num_threads(1)
    prep = prepare("baseline", cfg, load(cfg), 0)
    iters = {arm: iter(loader(arm, prep, 0)) for arm in ("baseline", "padded")}
    d2lmini.set_seed(0)
    net = d2lmini.make_transformer(*prep["vocab_sizes"], cfg["num_hiddens"],
                                   cfg["ffn_num_hiddens"], cfg["num_heads"], cfg["num_layers"],
                                   cfg["dropout"])
    recipe = d2lmini.TrainConfig(lr=cfg["lr_factor"], betas=(0.9, 0.98), eps=1e-9,
                                 warmup_steps=cfg["warmup_steps"],
                                 num_hiddens=cfg["num_hiddens"],
                                 label_smoothing=cfg["label_smoothing"],
                                 smoothing_skips_pad=True)
    trainer = d2lmini.Trainer(net, prep["tgt_vocab"], recipe, "cpu")
    rates: dict[str, list[float]] = {"baseline": [], "padded": []}
    for r in range(rounds):
        for arm in (("baseline", "padded") if r % 2 == 0 else ("padded", "baseline")):
            tokens, start = 0, time.perf_counter()
            for _ in range(steps):
                batch = next(iters[arm])
                trainer.step(batch)
                tokens += int(batch[3].sum())
            rates[arm].append(tokens / (time.perf_counter() - start))
    med = {arm: statistics.median(v) for arm, v in rates.items()}
    return {"rounds": rounds, "steps": steps, "tokens_per_sec": rates, "median": med,
            "bucketed_over_padded": med["baseline"] / med["padded"]}


def run(args, device=None) -> dict:
    cfg = dict(CONFIG)
    if args.quick:
        cfg.update(num_examples=4000, num_epochs=1, seeds=(0, 1), bpe_vocab=800,
                   warmup_steps=20)
    jobs = [{"config": cfg, "arm": arm, "seed": seed} for seed in cfg["seeds"] for arm in ARMS]
    print(f"[recipe] {len(jobs)} trainings, {args.processes} at a time", flush=True)
    start = time.perf_counter()
    if args.processes == 1:
        threads = torch.get_num_threads()
        runs = [run_job(job) for job in jobs]
        torch.set_num_threads(threads)
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.processes, mp_context=context) as pool:
            runs = []
            for r in pool.map(run_job, jobs):
                runs.append(r)
                print(f"  [recipe] {r['arm']} seed {r['seed']}: dev BLEU "
                      f"{r['dev_bleu']['avg_beam4']:.2f}, {r['seconds']:.0f} s", flush=True)
    speed = throughput(cfg)
    print(f"  [recipe] bucketed / padded tokens per second: {speed['bucketed_over_padded']:.2f}",
          flush=True)
    result = {"config": {**cfg, "seeds": list(cfg["seeds"])}, "arms": list(ARMS),
              "throughput": speed,
              "processes": args.processes, "wall_seconds": time.perf_counter() - start,
              "note": getattr(args, "note", None),
              "runs": runs, "comparisons": comparisons(runs)}
    common.write(sys.modules[__name__], result, torch.device("cpu"))
    return result


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--note", default=None)
    run(p.parse_args())
