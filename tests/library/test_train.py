"""Tests of d2lmini.train: masking, loss, clipping, the training step and loop, the schedule
and checkpoint averaging (BLEU is tested in test_metrics.py)."""

import math
import re

import pytest
import torch
from torch import nn

import d2lmini as d2l


def test_sequence_mask():
    X = torch.tensor([[1, 2, 3], [4, 5, 6]])
    torch.testing.assert_close(d2l.sequence_mask(X, torch.tensor([1, 2])),
                               torch.tensor([[1, 0, 0], [4, 5, 0]]))
    Y = d2l.sequence_mask(torch.ones(2, 3, 4), torch.tensor([1, 2]), value=-1)
    assert Y[0, 1:].eq(-1).all() and Y[1, :2].eq(1).all()


def test_masked_loss_ignores_padding_exactly():
    loss = d2l.MaskedSoftmaxCELoss()
    pred, label = torch.randn(3, 4, 10), torch.randint(0, 10, (3, 4))
    valid = torch.tensor([4, 2, 0])
    per_seq = loss(pred, label, valid)
    pred2, label2 = pred.clone(), label.clone()
    pred2[1, 2:] = torch.randn(2, 10) * 100  # change only the padding
    label2[1, 2:] = 7
    torch.testing.assert_close(loss(pred2, label2, valid), per_seq)
    assert per_seq[2] == 0  # a sequence of valid length 0 contributes nothing
    expected = nn.functional.cross_entropy(pred[0], label[0], reduction="sum")
    torch.testing.assert_close(per_seq[0], expected)


def test_masked_loss_padding_gets_no_gradient():
    pred = torch.randn(2, 3, 5, requires_grad=True)
    d2l.MaskedSoftmaxCELoss()(
        pred, torch.randint(0, 5, (2, 3)), torch.tensor([1, 3])).sum().backward()
    assert torch.all(pred.grad[0, 1:] == 0) and pred.grad[1].abs().sum() > 0


def test_masked_loss_label_smoothing():
    pred, label = torch.randn(2, 3, 6), torch.randint(0, 6, (2, 3))
    valid = torch.tensor([3, 3])
    smooth = d2l.MaskedSoftmaxCELoss(label_smoothing=0.1)(pred, label, valid)
    ref = nn.functional.cross_entropy(pred.reshape(-1, 6), label.reshape(-1),
                                      label_smoothing=0.1, reduction="none").reshape(2, 3)
    torch.testing.assert_close(smooth, ref.sum(1))


def test_label_smoothing_can_leave_pad_out_as_the_annotated_transformer_does():
    torch.manual_seed(0)
    V, pad, eps = 7, 1, 0.1
    pred, label = torch.randn(2, 4, V), torch.randint(2, V, (2, 4))  # labels are never <pad>
    valid = torch.tensor([4, 2])
    loss = d2l.MaskedSoftmaxCELoss(eps, pad_index=pad)(pred, label, valid)
    # by hand: 1 - eps on the label, eps / (V - 2) on every class but the label and <pad>
    expected = torch.zeros(2)
    for b in range(2):
        for t in range(int(valid[b])):
            logp = torch.log_softmax(pred[b, t], dim=0)
            q = torch.full((V,), eps / (V - 2))
            q[pad], q[label[b, t]] = 0.0, 1 - eps
            expected[b] += -(q * logp).sum()
    torch.testing.assert_close(loss, expected)
    plain = d2l.MaskedSoftmaxCELoss(eps)(pred, label, valid)
    assert not torch.allclose(loss, plain)  # PyTorch's smoothing puts eps / V on <pad>
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        d2l.MaskedSoftmaxCELoss(1.0)


def test_grad_clipping():
    net = nn.Linear(4, 4)
    (net(torch.ones(1, 4)) * 1000).sum().backward()
    norm = d2l.grad_clipping(net, 1.0)
    assert norm > 1
    total = torch.sqrt(sum((p.grad ** 2).sum() for p in net.parameters()))
    assert abs(total.item() - 1.0) < 1e-4


def test_init_seq2seq_weights_keeps_a_tied_output_weight():
    torch.manual_seed(0)
    net = d2l.make_transformer(50, 50, 16, 32, 2, 1, 0.0, share_embeddings=True,
                               tie_output=True)
    embedding = net.encoder.embedding.weight.detach().clone()
    ffn = net.encoder.blks[0].ffn.dense1.weight.detach().clone()
    d2l.init_seq2seq_weights(net)
    assert torch.equal(net.decoder.dense.weight, embedding)  # std 1/sqrt(d), not Xavier's
    assert not torch.equal(net.encoder.blks[0].ffn.dense1.weight, ffn)
    # untied: the same random draws as d2l's net.apply(xavier_init_weights)
    a, b = (d2l.make_transformer(20, 30, 16, 32, 2, 1, 0.0) for _ in range(2))
    b.load_state_dict(a.state_dict())
    torch.manual_seed(1)
    d2l.init_seq2seq_weights(a)
    torch.manual_seed(1)
    b.apply(d2l.xavier_init_weights)
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)


def test_xavier_init_weights_only_touches_linear():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(100, 100), nn.LayerNorm(100))
    net.apply(d2l.xavier_init_weights)
    bound = math.sqrt(6 / 200)
    assert net[0].weight.abs().max() <= bound and net[0].weight.std() > bound / 3
    assert torch.all(net[1].weight == 1)


def _copy_task(vocab, n=64, steps=6, seed=0):
    """Source: random words of ``vocab`` + <eos> + <pad>s; target: the same sequence."""
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(2, steps, (n,), generator=g)
    X = torch.randint(vocab["<eos>"] + 1, len(vocab), (n, steps), generator=g)  # the words
    pos = torch.arange(steps)[None, :]
    X = torch.where(pos < lens[:, None], X, torch.full_like(X, vocab["<pad>"]))
    X[torch.arange(n), lens] = vocab["<eos>"]  # lens < steps
    valid = lens + 1
    return X, valid


def _train_copy(vocab, num_epochs=30, **kw):
    d2l.set_seed(0)
    X, valid = _copy_task(vocab)
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(X, valid, X, valid), batch_size=16, shuffle=False)
    net = d2l.make_transformer(len(vocab), len(vocab), 32, 64, 4, 2, 0.0)
    result = d2l.train_seq2seq(net, data, 0.01, num_epochs, vocab, "cpu", animate=False,
                               progress=False, **kw)
    return net, result


def test_train_seq2seq_learns_and_reports(capsys, tiny_vocab):
    vocab = tiny_vocab
    net, result = _train_copy(vocab)
    assert isinstance(result, d2l.TrainResult) and result.device == "cpu"
    assert len(result.losses) == 30 and result.losses[-1] < 0.3 * result.losses[0]
    assert result.tokens_per_sec > 0 and result.seconds > 0
    assert "tokens/sec" in capsys.readouterr().out
    # the trained model copies most training sentences (greedy and beam search); an
    # untrained model copies none (the chance of a whole sentence is below 1 %)
    X, valid = _copy_task(vocab)
    sentences = [" ".join(vocab.to_tokens(X[i, :valid[i] - 1])) for i in range(len(X))]
    for beam in (1, 3):
        copied = sum(d2l.predict_seq2seq(net, s, vocab, vocab, 6, "cpu", beam_size=beam)[0] == s
                     for s in sentences)
        assert copied >= 0.4 * len(sentences), (beam, copied)


def test_train_seq2seq_is_repeatable_bit_for_bit(tiny_vocab):
    _, a = _train_copy(tiny_vocab, num_epochs=3)
    _, b = _train_copy(tiny_vocab, num_epochs=3)
    assert a.losses == b.losses


def test_train_seq2seq_with_scheduler_and_label_smoothing(tiny_vocab):
    schedulers, lr_lambda = [], d2l.transformer_lr_lambda(32, 10)

    def factory(optimizer):
        schedulers.append(torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda))
        return schedulers[-1]
    _, plain = _train_copy(tiny_vocab, num_epochs=3)
    _, smooth = _train_copy(tiny_vocab, num_epochs=3, label_smoothing=0.1)
    _, scheduled = _train_copy(tiny_vocab, num_epochs=3, scheduler=factory)
    # the schedule stepped once per batch (4 batches of 16 per epoch) from the base lr 0.01
    assert schedulers[0].last_epoch == 3 * 4
    assert schedulers[0].get_last_lr()[0] == pytest.approx(0.01 * lr_lambda(12))
    assert scheduled.losses != plain.losses
    # the same initialisation and batches: smoothing adds its floor to every epoch's loss
    assert all(s > p for s, p in zip(smooth.losses, plain.losses)), (smooth, plain)


def test_seq2seq_step_is_one_optimizer_step_on_the_mean_token_loss(tiny_vocab):
    torch.manual_seed(0)
    net = d2l.make_transformer(12, 12, 16, 32, 2, 1, 0.0)
    X, valid = _copy_task(tiny_vocab, n=8)
    bos = tiny_vocab["<bos>"]
    batch = d2l.Seq2SeqBatch(X, valid, X, valid)
    loss = d2l.MaskedSoftmaxCELoss()
    before = [p.detach().clone() for p in net.parameters()]
    sgd = torch.optim.SGD(net.parameters(), lr=0.1)
    loss_sum, num_tokens = d2l.seq2seq_step(net, batch, loss, sgd, bos, "cpu", grad_clip=None)
    assert int(num_tokens) == int(valid.sum()) and not loss_sum.requires_grad
    # the same step by hand: gradient of loss_sum / num_tokens, one SGD update
    ref = d2l.make_transformer(12, 12, 16, 32, 2, 1, 0.0)
    for p, b in zip(ref.parameters(), before):
        p.data.copy_(b)
    loss_sum_ref, n = d2l.teacher_forcing_loss(ref, tuple(batch), loss, bos, "cpu")
    (loss_sum_ref / n).backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q - 0.1 * q.grad)


def test_seq2seq_batch_names_the_fields_and_trims_padding_columns():
    X, Y = torch.ones(2, 6, dtype=torch.long), torch.ones(2, 5, dtype=torch.long)
    batch = d2l.Seq2SeqBatch(X, torch.tensor([3, 2]), Y, torch.tensor([1, 4]))
    src, src_len, tgt, tgt_len = batch.trimmed()  # unpacks like d2l's 4-tuple
    assert src.shape == (2, 3) and tgt.shape == (2, 4) and src_len.tolist() == [3, 2]
    assert batch.to("cpu").tgt is Y


def test_predict_seq2seq_saves_attention_weights(tiny_vocab):
    vocab = tiny_vocab
    net, _ = _train_copy(vocab, num_epochs=1)
    out, weights = d2l.predict_seq2seq(net, "w3 w4", vocab, vocab, 5, "cpu",
                                       save_attention_weights=True)
    assert 1 <= len(weights) <= 5
    self_w, cross_w = weights[0][0]
    # the source is cut to its 3 tokens (the padding columns are masked anyway)
    assert self_w.shape == (1, 4, 1, 1) and cross_w.shape == (1, 4, 1, 3)
    for i, step in enumerate(weights):  # step i attends over the i + 1 positions so far
        assert step[0][0].shape == (1, 4, 1, i + 1)
    assert net.encoder.attention_weights[0].shape == (1, 4, 2 + 1, 2 + 1)  # "w3 w4 <eos>"
    # afterwards every module is back to its default setting: the fused kernel, nothing stored
    assert not any(m.store_attention_weights for m in net.modules()
               if isinstance(m, d2l.MultiHeadAttention))


def test_transformer_lr_lambda_matches_paper():
    f = d2l.transformer_lr_lambda(512, 4000)
    assert f(0) == pytest.approx(512 ** -0.5 * 4000 ** -1.5)
    peak = max(f(s) for s in range(8000))
    assert peak == pytest.approx(f(3999)) and peak == pytest.approx(512 ** -0.5 * 4000 ** -0.5)
    assert f(15999) == pytest.approx(512 ** -0.5 * 16000 ** -0.5)


def test_training_uses_fused_adam_on_cpu_with_the_plain_update_rule():
    torch.manual_seed(0)
    nets = [torch.nn.Linear(5, 3) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    fused = d2l.make_adam(nets[0], 0.01, torch.device("cpu"))
    plain = torch.optim.Adam(nets[1].parameters(), lr=0.01)
    assert fused.defaults["fused"] is True and not plain.defaults["fused"]
    X = torch.randn(8, 5)
    for _ in range(3):
        for net, opt in zip(nets, (fused, plain)):
            opt.zero_grad()
            net(X).pow(2).sum().backward()
            opt.step()
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-5)
    assert d2l.make_adam(nets[0], 0.01, torch.device("meta")).defaults["fused"] is None


def test_teacher_forcing_cuts_padding_columns_without_changing_the_loss():
    torch.manual_seed(0)
    net = d2l.make_transformer(12, 11, num_hiddens=16, ffn_num_hiddens=32, num_heads=2,
                          num_layers=2, dropout=0.0).eval()
    B, S, T = 3, 9, 8  # padded widths; the longest sentences are 5 and 4 tokens long
    X, Y = torch.randint(3, 12, (B, S)), torch.randint(3, 11, (B, T))
    X_len, Y_len = torch.tensor([5, 2, 3]), torch.tensor([4, 1, 3])
    X[torch.arange(S) >= X_len[:, None]] = 1  # <pad>
    Y[torch.arange(T) >= Y_len[:, None]] = 1
    loss = d2l.MaskedSoftmaxCELoss()
    widths = []
    hook = net.register_forward_pre_hook(lambda m, args: widths.append(
        (args[0].shape[1], args[1].shape[1])))
    with torch.no_grad():
        loss_sum, n = d2l.teacher_forcing_loss(net, (X, X_len, Y, Y_len), loss, 2,
                                              torch.device("cpu"))
        hook.remove()
        dec_input = torch.cat([torch.full((B, 1), 2), Y[:, :-1]], dim=1)
        full = loss(net(X, dec_input, X_len)[0], Y, Y_len).sum()  # on all the padding
    assert widths == [(5, 4)]
    assert int(n) == 8
    torch.testing.assert_close(loss_sum, full, atol=1e-5, rtol=1e-5)


def test_average_checkpoints_is_the_mean_and_keeps_integer_buffers():
    a = {"w": torch.tensor([1.0, 2.0]), "n": torch.tensor(3)}
    b = {"w": torch.tensor([3.0, 6.0]), "n": torch.tensor(7)}
    avg = d2l.average_checkpoints([a, b])
    assert torch.equal(avg["w"], torch.tensor([2.0, 4.0]))
    assert avg["w"].dtype == torch.float32
    assert torch.equal(avg["n"], torch.tensor(7))  # from the last checkpoint
    assert d2l.average_checkpoints([a])["w"] is not a["w"]  # a copy, not the input


def test_average_checkpoints_of_a_model_loads_back():
    torch.manual_seed(0)
    net = d2l.make_transformer(11, 13, 16, 32, 2, 1, 0.0)
    first = {k: v.clone() for k, v in net.state_dict().items()}
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)
    avg = d2l.average_checkpoints([first, net.state_dict()])
    net.load_state_dict(avg)
    for name, p in net.named_parameters():
        torch.testing.assert_close(p, first[name] + 0.5)


@pytest.mark.parametrize("bad, error, word", [
    ([], ValueError, "at least one"),
    ({"w": torch.zeros(2)}, TypeError, "state_dicts"),
    ([{"w": [1.0]}], TypeError, "state_dicts[0]"),
    ([{"w": torch.zeros(2)}, {"v": torch.zeros(2)}], ValueError, "keys"),
    ([{"w": torch.zeros(2)}, {"w": torch.zeros(3)}], ValueError, "shape"),
])
def test_average_checkpoints_rejects_bad_input(bad, error, word):
    with pytest.raises(error, match=re.escape(word)):
        d2l.average_checkpoints(bad)


# ---------------------------------------------------------------------------------------------
# TrainConfig and Trainer: the library's one training loop
# ---------------------------------------------------------------------------------------------

def _copy_loader(vocab, batch_size=16):
    X, valid = _copy_task(vocab)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, valid, X, valid),
                                       batch_size=batch_size, shuffle=False)


def _small_net(vocab, dropout=0.0):
    d2l.set_seed(0)
    return d2l.make_transformer(len(vocab), len(vocab), 16, 32, 2, 1, dropout)


def test_train_seq2seq_is_a_trainer_with_a_default_recipe(tiny_vocab):
    _, via_function = _train_copy(tiny_vocab, num_epochs=3)
    d2l.set_seed(0)  # as _train_copy: the seed, then the model, then training
    net = d2l.make_transformer(len(tiny_vocab), len(tiny_vocab), 32, 64, 4, 2, 0.0)
    config = d2l.TrainConfig(num_epochs=3, lr=0.01)
    result = d2l.Trainer(net, tiny_vocab, config, "cpu").fit(_copy_loader(tiny_vocab))
    assert result.losses == via_function.losses
    assert result.steps == 3 * 4 and result.averaged is None and result.num_snapshots == 0


def test_the_recipe_builds_the_papers_optimizer_schedule_and_loss(tiny_vocab):
    config = d2l.TrainConfig(num_epochs=2, lr=0.7, betas=(0.9, 0.98), eps=1e-9,
                             warmup_steps=3, num_hiddens=16, label_smoothing=0.1,
                             smoothing_skips_pad=True)
    trainer = d2l.Trainer(_small_net(tiny_vocab), tiny_vocab, config, "cpu")
    group = trainer.optimizer.param_groups[0]
    assert (group["betas"], group["eps"]) == ((0.9, 0.98), 1e-9)
    assert trainer.loss.eps == 0.1 and trainer.loss.pad_index == tiny_vocab["<pad>"]
    trainer.fit(_copy_loader(tiny_vocab))
    schedule = d2l.transformer_lr_lambda(16, 3)
    assert group["lr"] == pytest.approx(0.7 * schedule(8))  # after 2 epochs of 4 steps


def test_snapshots_are_the_last_steps_at_even_gaps_and_are_averaged(tiny_vocab):
    seen = []
    config = d2l.TrainConfig(num_epochs=5, lr=0.01, num_snapshots=3, snapshot_every=0.1)
    trainer = d2l.Trainer(_small_net(tiny_vocab), tiny_vocab, config, "cpu")
    step = trainer.step

    def spy(batch):  # the weights after each of the 20 steps
        out = step(batch)
        seen.append({k: v.clone() for k, v in trainer.net.state_dict().items()})
        return out

    trainer.step = spy
    result = trainer.fit(_copy_loader(tiny_vocab))
    assert result.steps == 20 and result.num_snapshots == 3
    # gap = 10 % of 20 steps = 2: after steps 16, 18 and 20 (the last)
    expected = d2l.average_checkpoints([seen[15], seen[17], seen[19]])
    for name, value in expected.items():
        torch.testing.assert_close(result.averaged[name], value, rtol=0, atol=0)


def test_fit_tells_the_sampler_each_epoch_so_looking_at_it_changes_nothing(tiny_vocab):
    X, valid = _copy_task(tiny_vocab)
    losses = []
    for look_first in (False, True):
        sampler = d2l.BucketSampler(valid, valid, max_tokens=48, seed=0)
        if look_first:
            assert sum(len(b) for b in sampler) == len(X)  # counting the batches
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(X, valid, X, valid), batch_sampler=sampler)
        trainer = d2l.Trainer(_small_net(tiny_vocab), tiny_vocab,
                              d2l.TrainConfig(num_epochs=3, lr=0.01), "cpu")
        losses.append(trainer.fit(loader).losses)
        assert sampler.epoch == 2  # the last epoch's order was drawn
    assert losses[0] == losses[1]


def test_estimate_loss_is_the_mean_token_loss_without_dropout_and_an_evaluate_hook(tiny_vocab):
    loader = _copy_loader(tiny_vocab)
    trainer = d2l.Trainer(_small_net(tiny_vocab, dropout=0.3), tiny_vocab,
                          d2l.TrainConfig(num_epochs=2, lr=0.01), "cpu")
    result = trainer.fit(loader, evaluate=lambda t: t.estimate_loss(loader))
    assert len(result.evaluations) == 2 and trainer.net.training  # back in training mode
    trainer.net.eval()
    with torch.no_grad():
        sums = [d2l.teacher_forcing_loss(trainer.net, b, trainer.loss, trainer.bos, "cpu")
                for b in loader]
    expected = sum(float(s) for s, _ in sums) / sum(int(n) for _, n in sums)
    assert trainer.estimate_loss(loader) == pytest.approx(expected)
    assert result.evaluations[-1] == pytest.approx(expected)


def test_fit_logs_every_epoch_and_calls_on_epoch(tiny_vocab):
    lines, calls = [], []
    d2l.Trainer(_small_net(tiny_vocab), tiny_vocab, d2l.TrainConfig(num_epochs=2, lr=0.01),
                "cpu").fit(_copy_loader(tiny_vocab), log=lines.append,
                           on_epoch=lambda e, r: calls.append((e, len(r.losses))))
    assert calls == [(0, 1), (1, 2)]
    assert [line.split(":")[0] for line in lines[:2]] == ["epoch 1/2", "epoch 2/2"]
    assert "tokens/sec on 1 x cpu" in lines[2]


@pytest.mark.parametrize("kw, error, word", [
    (dict(num_epochs=0), ValueError, "num_epochs"),
    (dict(lr=0), ValueError, "lr"),
    (dict(betas=(0.9,)), TypeError, "betas"),
    (dict(betas=(0.9, 1.0)), ValueError, "betas"),
    (dict(eps=-1.0), ValueError, "eps"),
    (dict(warmup_steps=10), ValueError, "num_hiddens"),
    (dict(warmup_steps=0, num_hiddens=8), ValueError, "warmup_steps"),
    (dict(label_smoothing=1.0), ValueError, "label_smoothing"),
    (dict(grad_clip=0.0), ValueError, "grad_clip"),
    (dict(num_snapshots=-1), ValueError, "num_snapshots"),
    (dict(snapshot_every=0.0), ValueError, "snapshot_every"),
    (dict(init=1), TypeError, "init"),
    (dict(seed=-1), ValueError, "seed"),
])
def test_train_config_names_the_bad_field(kw, error, word):
    with pytest.raises(error, match=word):
        d2l.TrainConfig(**kw)


def test_trainer_rejects_what_it_cannot_do(tiny_vocab):
    net = _small_net(tiny_vocab)
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        d2l.Trainer(net, tiny_vocab, {"lr": 0.1}, "cpu")
    with pytest.raises(ValueError, match="scheduler"):
        d2l.Trainer(net, tiny_vocab, d2l.TrainConfig(warmup_steps=4, num_hiddens=16), "cpu",
                    scheduler=lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1))
    with pytest.raises(ValueError, match="amp .* needs a CUDA device"):
        d2l.Trainer(net, tiny_vocab, d2l.TrainConfig(amp=True), "cpu")
