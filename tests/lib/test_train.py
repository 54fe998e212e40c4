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
    # afterwards every module is back to its default setting: weights kept
    assert all(m.keep_weights for m in net.modules() if isinstance(m, d2l.MultiHeadAttention))


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
