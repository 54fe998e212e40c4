"""Tests of d2lmini.decode: batched greedy and beam search, length penalties, predict_seq2seq
and translate."""

import math

import pytest
import torch
from torch import nn

import d2lmini as d2l

BOS, EOS = 0, 1


def sequence_log_probs(net, src, src_valid_len, outputs, *, bos, eos):
    """``log P(Y <eos> | X)`` of given outputs under the model, by teacher forcing: for each
    sentence ``b``, the sum of the log-probabilities of ``outputs.tokens[b, :lengths[b]]`` and
    of an ``<eos>`` after them; ``(B,)`` float64. The reference the decoders are checked
    against."""
    tokens, lengths = outputs.tokens, outputs.lengths
    B = tokens.shape[0]
    target = torch.cat([tokens, torch.full((B, 1), eos, dtype=tokens.dtype)], dim=1)
    target = target.scatter(1, lengths[:, None], eos)  # <eos> right after each output
    dec_X = torch.cat([torch.full((B, 1), bos, dtype=tokens.dtype), target[:, :-1]], dim=1)
    was_training = net.training
    net.eval()
    try:
        with torch.no_grad():
            logits, _ = net(src, dec_X, src_valid_len)
    finally:
        net.train(was_training)
    logp = torch.log_softmax(logits.double(), dim=-1).gather(2, target[:, :, None])[..., 0]
    keep = torch.arange(target.shape[1]) <= lengths[:, None]
    return logp.masked_fill(~keep, 0.0).sum(dim=1)


class _SourceAsFeatures(nn.Module):
    """An 'encoder' that returns its input ids as one feature (the Markov decoder ignores it)."""

    def forward(self, X, valid_lens=None):
        return X[..., None].float()


class _MarkovDecoder(nn.Module):
    """A decoder whose next-token distribution depends only on the previous token:
    ``log_probs[prev]``. It counts its calls."""

    def __init__(self, probs):
        super().__init__()
        self.log_probs = torch.log(torch.tensor(probs, dtype=torch.float32))
        self.calls = 0

    def init_state(self, enc_outputs, enc_valid_lens=None, reserve=0):
        kv = enc_outputs[:, None]  # (B, 1, S, 1): something for select() to index
        return d2l.DecoderState([(kv, kv)], enc_valid_lens, [None], 0, reserve)

    def forward(self, X, state):
        self.calls += 1
        state.offset += X.shape[1]
        return self.log_probs[X], state


def _markov_net():
    """Tokens: 0 <bos>, 1 <eos>, 2 a, 3 b, 4 c. Greedy takes a (0.55), then c (0.4), then
    <eos>: P = 0.22. The better sentence starts with the less likely b: b <eos>, P = 0.405."""
    probs = [[0.0, 0.0, 0.55, 0.45, 0.0],  # after <bos>
             [0.2] * 5,                     # after <eos> (never used)
             [0.0, 0.3, 0.0, 0.3, 0.4],     # after a
             [0.0, 0.9, 0.05, 0.0, 0.05],   # after b
             [0.0, 1.0, 0.0, 0.0, 0.0]]     # after c
    return d2l.EncoderDecoder(_SourceAsFeatures(), _MarkovDecoder(probs))


def _random_net(seed=0):
    torch.manual_seed(seed)
    return d2l.make_transformer(20, 30, 32, 64, 4, 2, 0.1)


def _sources(n=6, steps=7, seed=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.randint(3, 20, (n, steps), generator=g)
    valid = torch.randint(2, steps + 1, (n,), generator=g)
    X[torch.arange(steps) >= valid[:, None]] = 2  # padding
    return X, valid


def test_length_penalties():
    n = torch.tensor([1, 2, 7])
    torch.testing.assert_close(d2l.length_penalty("gnmt", 0.6)(n),
                               ((5 + n.double()) / 6) ** 0.6)
    assert d2l.length_penalty("gnmt", 0.6)(torch.tensor([1])).item() == pytest.approx(1.0)
    torch.testing.assert_close(d2l.length_penalty("d2l", 0.75)(n), n.double() ** 0.75)
    assert d2l.length_penalty(None)(n).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="length_penalty kind"):
        d2l.length_penalty("wu")


def test_beam_search_finds_the_more_likely_sentence_that_greedy_misses():
    net = _markov_net()
    src = torch.zeros(1, 3, dtype=torch.long)
    greedy = d2l.greedy_search(net, src, None, bos=BOS, eos=EOS, max_len=10)
    assert greedy.to_lists() == [[2, 4]]  # a c
    for penalty in (None, "gnmt", "d2l"):
        beam = d2l.beam_search(net, src, None, bos=BOS, eos=EOS, max_len=10, beam_size=2,
                               penalty=penalty)
        assert beam.to_lists() == [[3]], penalty  # b
    scores = [sequence_log_probs(net, src, None, out, bos=BOS, eos=EOS).item()
              for out in (greedy, beam)]
    assert scores == pytest.approx([math.log(0.55 * 0.4 * 1.0), math.log(0.45 * 0.9)])
    # the reported score is the length-normalised log-probability (|Y| counts <eos>)
    gnmt = d2l.beam_search(net, src, None, bos=BOS, eos=EOS, max_len=10, beam_size=2)
    assert gnmt.scores.item() == pytest.approx(math.log(0.405) / ((5 + 2) / 6) ** 0.6)


def test_decoding_stops_when_every_sentence_has_ended():
    net = _markov_net()
    src = torch.zeros(3, 2, dtype=torch.long)
    out = d2l.greedy_search(net, src, None, bos=BOS, eos=EOS, max_len=50)
    assert net.decoder.calls == 3 and out.tokens.shape == (3, 3)
    assert out.lengths.tolist() == [2, 2, 2] and out.tokens[:, 2].tolist() == [EOS] * 3
    net.decoder.calls = 0
    d2l.beam_search(net, src, None, bos=BOS, eos=EOS, max_len=50, beam_size=2)
    assert net.decoder.calls <= 4  # b <eos> and a <eos> finish by step 2; a c <eos> by 3


def test_maximum_output_length_per_sentence():
    net = _random_net()
    X, valid = _sources(3)
    limits = torch.tensor([2, 5, 3])
    out = d2l.greedy_search(net, X, valid, bos=BOS, eos=None, max_len=limits)
    assert out.tokens.shape == (3, 5) and out.lengths.tolist() == [2, 5, 3]
    for search in (d2l.greedy_search, d2l.beam_search):
        out = search(net, X, valid, bos=BOS, eos=EOS, max_len=limits)
        assert all(n <= m for n, m in zip(out.lengths.tolist(), limits.tolist()))
    with pytest.raises(ValueError, match="max_len must be a positive int or a tensor of 3"):
        d2l.greedy_search(net, X, valid, bos=BOS, eos=EOS, max_len=torch.tensor([2, 3]))
    with pytest.raises(TypeError, match="max_len must be a positive int"):
        d2l.greedy_search(net, X, valid, bos=BOS, eos=EOS, max_len=2.5)


@pytest.mark.parametrize("penalty, alpha", [("gnmt", 0.6), ("d2l", 0.75), (None, 0.0)])
def test_beam_size_one_is_greedy_search(penalty, alpha):
    net = _random_net()
    X, valid = _sources(8)
    greedy = d2l.greedy_search(net, X, valid, bos=BOS, eos=EOS, max_len=12)
    beam = d2l.beam_search(net, X, valid, bos=BOS, eos=EOS, max_len=12, beam_size=1,
                           alpha=alpha, penalty=penalty)
    assert beam.to_lists() == greedy.to_lists()


def test_batched_beam_search_equals_one_sentence_at_a_time():
    net = _random_net(3)
    X, valid = _sources(6)
    limits = torch.tensor([4, 9, 6, 9, 2, 7])
    batched = d2l.beam_search(net, X, valid, bos=BOS, eos=EOS, max_len=limits, beam_size=3)
    for i in range(len(X)):
        alone = d2l.beam_search(net, X[i:i + 1], valid[i:i + 1], bos=BOS, eos=EOS,
                                max_len=int(limits[i]), beam_size=3)
        assert alone.to_lists() == [batched.to_lists()[i]], i
        assert alone.scores.item() == pytest.approx(batched.scores[i].item(), abs=1e-5)
    assert net.training  # the module's mode is restored


def test_greedy_decoding_is_the_same_with_and_without_the_cache():
    net = _random_net()
    X, valid = _sources(4)
    cached = d2l.greedy_search(net, X, valid, bos=BOS, eos=None, max_len=9)
    rerun = d2l.greedy_search(net, X, valid, bos=BOS, eos=None, max_len=9, use_cache=False)
    assert torch.equal(cached.tokens, rerun.tokens) and cached.tokens.shape == (4, 9)


def test_beam_scores_are_the_normalised_log_probabilities_of_the_outputs():
    net = _random_net(5)
    X, valid = _sources(5)
    out = d2l.beam_search(net, X, valid, bos=BOS, eos=EOS, max_len=30, beam_size=4,
                          alpha=0.6, penalty="gnmt")
    ended = out.lengths < 30  # cut hypotheses have no <eos> to score
    log_p = sequence_log_probs(net, X, valid, out, bos=BOS, eos=EOS)
    lp = d2l.length_penalty("gnmt", 0.6)(out.lengths + 1)
    torch.testing.assert_close(out.scores[ended], (log_p / lp)[ended], atol=1e-4, rtol=1e-4)


def test_translate_in_batches_equals_predict_seq2seq_sentence_by_sentence(tiny_vocab):
    vocab = tiny_vocab
    torch.manual_seed(2)
    net = d2l.make_transformer(len(vocab), len(vocab), 32, 64, 4, 2, 0.0)
    sentences = ["w1 w2", "w3", "w4 w5 w6 w7", "w8 w2 w1", "w5", "w6 w7 w3"]
    tokenized = [s.split() for s in sentences]
    for beam_size in (1, 3):
        batched = d2l.translate(net, tokenized, vocab, vocab, 6, "cpu", batch_size=4,
                                beam_size=beam_size, alpha=0.75, penalty="d2l")
        single = [d2l.predict_seq2seq(net, s, vocab, vocab, 6, "cpu", beam_size=beam_size)[0]
                  for s in sentences]
        assert [" ".join(t) for t in batched] == single
    # a maximum length that depends on the source: here 1 + its valid length
    short = d2l.translate(net, tokenized, vocab, vocab, 6, "cpu", max_len=lambda n: n + 1)
    assert all(len(t) <= len(s) + 2 for t, s in zip(short, tokenized))


def test_predict_seq2seq_checks_its_options(tiny_vocab):
    vocab = tiny_vocab
    net = d2l.make_transformer(len(vocab), len(vocab), 8, 16, 2, 1, 0.0)
    with pytest.raises(ValueError, match="save_attention_weights"):
        d2l.predict_seq2seq(net, "w1", vocab, vocab, 4, "cpu", True, beam_size=2)
    with pytest.raises(ValueError, match="beam_size must be a positive int"):
        d2l.predict_seq2seq(net, "w1", vocab, vocab, 4, "cpu", beam_size=0)
