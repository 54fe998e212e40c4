"""Tests of d2lmini.transformer: positional encoding, blocks, encoder, decoder and KV cache."""

import dataclasses
import math

import pytest
import torch
from torch import nn

import d2lmini as d2l


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.mark.parametrize("d", [4, 7, 32])
def test_positional_encoding_matches_formula(d):
    pe = d2l.PositionalEncoding(d, 0.0, max_len=50)
    P = pe.P[0]
    for pos in (0, 1, 13, 49):
        for j in range(d):
            i = j // 2
            angle = pos / 10000 ** (2 * i / d)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert abs(P[pos, j].item() - expected) < 1e-5


def _float64_table(max_len, d):
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    angles = pos / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    P = torch.empty(max_len, d, dtype=torch.float64)
    P[:, 0::2], P[:, 1::2] = angles.sin(), angles.cos()[:, : d // 2]
    return P


@pytest.mark.parametrize("d", [33, 100, 512])
def test_positional_encoding_is_the_float64_table_rounded_once(d):
    # computed in float32 (angles included) position 999 alone is off by ~6e-5; rounded once
    # from float64, every entry (|x| <= 1) is within half a float32 unit, 2**-25, of the exact
    # value (2**-24: room for two float64 sines that differ in their last bit)
    P = d2l.PositionalEncoding(d, 0.0).P[0]
    assert P.dtype == torch.float32
    assert (P.double() - _float64_table(1000, d)).abs().max().item() <= 2 ** -24


def test_positional_encoding_does_not_depend_on_float32_sine(monkeypatch):
    # a build once got a table whose float32 sine was ~1.5e-4 too small in some entries;
    # float32 sin/cos that are that inexact here must not reach the table
    exact_sin, exact_cos = torch.sin, torch.cos

    def inexact(f):
        def g(x):
            y = f(x)
            return y * (1 - 1.5e-4) if y.dtype == torch.float32 else y
        return g

    monkeypatch.setattr(torch, "sin", inexact(exact_sin))
    monkeypatch.setattr(torch, "cos", inexact(exact_cos))
    P = d2l.PositionalEncoding(100, 0.0).P[0]
    monkeypatch.undo()
    assert (P.double() - _float64_table(1000, 100)).abs().max().item() <= 2 ** -24


def test_positional_encoding_offset_and_buffer():
    pe = d2l.PositionalEncoding(8, 0.0, max_len=20)
    X = torch.zeros(2, 3, 8)
    torch.testing.assert_close(pe(X, offset=5)[0], pe.P[0, 5:8])
    assert "P" not in pe.state_dict()  # recomputed, not saved
    enc = d2l.TransformerEncoder(d2l.TransformerConfig(
        10, num_hiddens=8, ffn_num_hiddens=16, num_heads=2, num_layers=1, dropout=0.0,
        max_len=20))
    with pytest.raises(ValueError, match="num_steps <= 20"):
        enc(torch.zeros(1, 21, dtype=torch.long))


def test_position_wise_ffn_acts_per_position():
    ffn = d2l.PositionWiseFFN(16, 8)
    X = torch.randn(2, 3, 8)
    out = ffn(X)
    assert out.shape == (2, 3, 8)
    torch.testing.assert_close(out[0, 1], ffn(X[0, 1][None, None])[0, 0])
    assert d2l.PositionWiseFFN(16, 5, ffn_num_input=3)(torch.randn(1, 2, 3)).shape == (1, 2, 5)


def test_add_norm():
    add_norm = d2l.AddNorm(4, 0.0)
    X, Y = torch.randn(2, 3, 4), torch.randn(2, 3, 4)
    out = add_norm(X, Y)
    torch.testing.assert_close(out, nn.functional.layer_norm(X + Y, (4,)))


def test_sublayer_connection_post_ln_and_pre_ln():
    X = torch.randn(2, 3, 4)
    double = lambda Z: 2 * Z  # noqa: E731
    post = d2l.SublayerConnection(4, 0.0)
    torch.testing.assert_close(post(X, double), nn.functional.layer_norm(3 * X, (4,)))
    assert isinstance(post.addnorm, d2l.AddNorm)  # the paper's order is AddNorm itself
    pre = d2l.SublayerConnection(4, 0.0, norm_first=True)
    torch.testing.assert_close(pre(X, double), X + 2 * nn.functional.layer_norm(X, (4,)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_sublayer_connection_drops_the_sublayer_in_training_only(norm_first):
    X = torch.randn(4, 5, 8)
    double = lambda Z: 2 * Z  # noqa: E731
    ln = lambda Z: nn.functional.layer_norm(Z, (8,))  # noqa: E731
    drop = lambda Z: nn.functional.dropout(Z, 0.5, training=True)  # noqa: E731
    formula = ((lambda Z, f: Z + f(double(ln(Z)))) if norm_first else  # pre-LN
               (lambda Z, f: ln(Z + f(double(Z)))))  # post-LN
    conn = d2l.SublayerConnection(8, 0.5, norm_first=norm_first).train()
    a, b = conn(X, double), conn(X, double)
    assert not torch.allclose(a, b)  # a new dropout mask on each call
    # the mask is applied to the sub-layer's output, scaled by 1 / (1 - p): the same random
    # numbers through the formula give the same result
    torch.manual_seed(7)
    got = conn(X, double)
    torch.manual_seed(7)
    torch.testing.assert_close(got, formula(X, drop))
    # evaluation: no dropout, deterministic, the formula without dropout
    conn.eval()
    torch.testing.assert_close(conn(X, double), formula(X, lambda Z: Z), atol=1e-6, rtol=0)
    assert torch.equal(conn(X, double), conn(X, double))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_block_and_encoder_shapes(norm_first):
    config = d2l.TransformerConfig(200, num_hiddens=24, ffn_num_hiddens=48, num_heads=8,
                                   num_layers=2, dropout=0.5, norm_first=norm_first)
    blk = d2l.EncoderBlock(config)
    assert blk(torch.ones(2, 100, 24), torch.tensor([3, 2])).shape == (2, 100, 24)
    enc = d2l.TransformerEncoder(config)
    assert enc.attention_weights == [None, None]  # the fused kernel stores nothing
    with d2l.store_attention_weights(enc):
        out = enc(torch.ones(2, 100, dtype=torch.long), torch.tensor([3, 2]))
    assert out.shape == (2, 100, 24)
    assert len(enc.attention_weights) == 2 and enc.attention_weights[0].shape == (2, 8, 100, 100)


def test_post_ln_output_is_normalised_and_pre_ln_has_final_norm():
    tokens, valid = torch.randint(0, 50, (2, 6)), torch.tensor([6, 4])
    config = d2l.TransformerConfig(50, num_hiddens=16, ffn_num_hiddens=32, num_heads=4,
                                   num_layers=2, dropout=0.0)
    enc = d2l.TransformerEncoder(config).eval()
    out = enc(tokens, valid)
    torch.testing.assert_close(out.mean(-1), torch.zeros(2, 6), atol=1e-5, rtol=0)
    assert isinstance(enc.final_norm, nn.Identity)
    torch.manual_seed(0)
    pre = d2l.TransformerEncoder(dataclasses.replace(config, norm_first=True)).eval()
    with torch.no_grad():  # a final norm whose scale and shift show in the output
        pre.final_norm.weight.uniform_(0.5, 2.0)
        pre.final_norm.bias.uniform_(-1.0, 1.0)
        out = pre(tokens, valid)
        # each block by the pre-LN formula: X + attention(LN1(X)), then Y + ffn(LN2(Y))
        X = pre.pos_encoding(pre.embedding(tokens) * math.sqrt(16))
        for blk in pre.blks:
            Z = blk.residual1.ln(X)
            Y = X + blk.attention(Z, Z, Z, valid)
            X = Y + blk.ffn(blk.residual2.ln(Y))
        # the residual stream is not normalised before the final norm; after it, it is
        assert X.mean(-1).abs().max() > 1e-2
        torch.testing.assert_close(out, nn.functional.layer_norm(
            X, (16,), pre.final_norm.weight, pre.final_norm.bias), atol=1e-5, rtol=1e-5)
        normed = (out - pre.final_norm.bias) / pre.final_norm.weight
        torch.testing.assert_close(normed.mean(-1), torch.zeros(2, 6), atol=1e-5, rtol=0)


def _net(norm_first=False, **kw):
    return d2l.make_transformer(20, 30, 32, 64, 4, 2, 0.1, norm_first=norm_first, **kw).eval()


@pytest.mark.parametrize("norm_first", [False, True])
def test_incremental_decoding_equals_whole_sequence(norm_first):
    net = _net(norm_first)
    X, valid = torch.randint(0, 20, (3, 7)), torch.tensor([7, 3, 5])
    Y = torch.randint(0, 30, (3, 6))
    with torch.no_grad():
        full, _ = net(X, Y, valid)
        state = net.decoder.init_state(net.encoder(X, valid), valid)
        steps = []
        for t in range(Y.shape[1]):
            logits, state = net.decoder(Y[:, t:t + 1], state)
            steps.append(logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=1e-5)
    # the cache holds the projected keys and values, (B, h, capacity, d_h) per layer, of
    # which the first state.offset positions are filled
    assert isinstance(state, d2l.DecoderState) and state.offset == 6 and state.batch_size == 3
    k, v = state.self_kv[0]
    assert k.shape[:2] == v.shape[:2] == (3, 4) and k.shape[3] == 8 and k.shape[2] >= 6


def test_reserved_cache_is_filled_in_place_and_grows_when_full():
    net = _net()
    X, valid = torch.randint(0, 20, (2, 5)), torch.tensor([5, 2])
    Y = torch.randint(0, 30, (2, 9))
    with torch.no_grad():
        full, _ = net(X, Y, valid)
        for reserve in (0, 4, 9):
            state = net.decoder.init_state(net.encoder(X, valid), valid, reserve)
            steps, capacities, pointers = [], [], set()
            for t in range(Y.shape[1]):
                logits, state = net.decoder(Y[:, t:t + 1], state)
                steps.append(logits)
                capacities.append(state.self_kv[1][0].shape[2])
                pointers.add(state.self_kv[1][0].data_ptr())
            torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=1e-5)
            # no reserve: the first keys themselves, then buffers doubling; a reserve of 4
            # is outgrown twice; one of 9 is written in place at every step
            assert sorted(set(capacities)) == {0: [1, 2, 4, 8, 16], 4: [4, 8, 16],
                                               9: [9]}[reserve]
        assert len(pointers) == 1


def test_decoder_state_fresh_keeps_the_source_and_empties_the_cache():
    net = _net()
    X, valid = torch.randint(0, 20, (2, 5)), torch.tensor([5, 2])
    with torch.no_grad():
        state = net.decoder.init_state(net.encoder(X, valid), valid)
        _, state = net.decoder(torch.randint(0, 30, (2, 3)), state)
    fresh = state.fresh()
    assert fresh.offset == 0 and fresh.self_kv == [None, None]
    assert fresh.cross_kv is state.cross_kv and fresh.enc_valid_lens is valid


def test_chunked_decoding_equals_whole_sequence():
    net = _net()
    X, valid = torch.randint(0, 20, (2, 5)), torch.tensor([5, 2])
    Y = torch.randint(0, 30, (2, 7))
    with torch.no_grad():
        full, _ = net(X, Y, valid)
        state = net.decoder.init_state(net.encoder(X, valid), valid)
        a, state = net.decoder(Y[:, :3], state)
        b, state = net.decoder(Y[:, 3:], state)
    torch.testing.assert_close(torch.cat([a, b], 1), full, atol=1e-5, rtol=1e-5)


def test_decoder_is_causal():
    net = _net()
    X, valid = torch.randint(0, 20, (2, 5)), torch.tensor([5, 4])
    Y = torch.randint(0, 30, (2, 6))
    Y2 = Y.clone()
    Y2[:, 4:] = (Y2[:, 4:] + 1) % 30  # change the future
    with torch.no_grad():
        a, _ = net(X, Y, valid)
        b, _ = net(X, Y2, valid)
    torch.testing.assert_close(a[:, :4], b[:, :4])
    assert not torch.allclose(a[:, 4:], b[:, 4:])


def test_decoder_attention_weights_shapes():
    net = _net()
    X, valid = torch.randint(0, 20, (2, 5)), torch.tensor([5, 4])
    with d2l.store_attention_weights(net):
        net(X, torch.randint(0, 30, (2, 6)), valid)
    self_w, cross_w = net.decoder.attention_weights[1]
    assert self_w.shape == (2, 4, 6, 6) and cross_w.shape == (2, 4, 6, 5)
    assert torch.all(self_w[0, 0].triu(1) == 0)  # causal
    assert torch.all(cross_w[1, :, :, 4:] == 0)  # encoder padding


def test_decoder_state_select_follows_batch_entries():
    net = _net()
    X, valid = torch.randint(0, 20, (3, 5)), torch.tensor([5, 2, 4])
    Y = torch.randint(0, 30, (3, 2))
    with torch.no_grad():
        state = net.decoder.init_state(net.encoder(X, valid), valid)
        _, state = net.decoder(Y, state)
        index = torch.tensor([2, 2, 0])
        state2 = state.select(index)
        assert state2.batch_size == 3 and state2.offset == state.offset == 2
        nxt = torch.randint(0, 30, (3, 1))
        out2, _ = net.decoder(nxt[index], state2)
        out, _ = net.decoder(nxt, state)
    torch.testing.assert_close(out2, out[index])


def test_decoder_state_select_without_the_source_for_beams_of_one_sentence():
    net = _net()
    X, valid = torch.randint(0, 20, (1, 5)).repeat(3, 1), torch.tensor([4, 4, 4])
    with torch.no_grad():
        state = net.decoder.init_state(net.encoder(X, valid), valid)
        _, state = net.decoder(torch.randint(0, 30, (3, 2)), state)
        index = torch.tensor([1, 0, 0])  # beams of the same sentence
        kept = state.select(index, source=False)
        assert kept.cross_kv is state.cross_kv
        nxt = torch.randint(0, 30, (3, 1))
        torch.testing.assert_close(net.decoder(nxt, kept)[0],
                                   net.decoder(nxt, state.select(index))[0])


def test_encoder_decoder_training_shapes():
    net = _net()
    net.train()
    logits, state = net(torch.randint(0, 20, (4, 9)), torch.randint(0, 30, (4, 8)),
                        torch.tensor([9, 5, 3, 1]))
    assert logits.shape == (4, 8, 30)
    assert state.offset == 8
    with pytest.raises(ValueError, match="same batch size"):
        net(torch.randint(0, 20, (4, 9)), torch.randint(0, 30, (3, 8)))


def test_entry_points_name_the_argument_and_the_expected_shape():
    net = _net()
    with pytest.raises(ValueError, match=r"X must have shape \(batch_size, num_steps"):
        net.encoder(torch.zeros(2, 3, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(2,\)"):
        net.encoder(torch.zeros(2, 3, dtype=torch.long), torch.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="enc_outputs must have shape"):
        net.decoder.init_state(torch.zeros(2, 3, 7))
    with pytest.raises(ValueError, match="enc_valid_lens must have shape"):
        net.decoder.init_state(torch.zeros(2, 3, 32), torch.tensor([3]))
    state = net.decoder.init_state(torch.zeros(2, 3, 32))
    with pytest.raises(ValueError, match=r"T <= max_len - offset = 1000"):
        net.decoder(torch.zeros(2, 1001, dtype=torch.long), state)


def test_shared_embeddings_and_tied_output():
    net = d2l.make_transformer(50, 50, 16, 32, 2, 1, 0.0, share_embeddings=True, tie_output=True)
    assert net.encoder.embedding is net.decoder.embedding
    assert net.decoder.dense.weight is net.decoder.embedding.weight
    untied = d2l.make_transformer(50, 50, 16, 32, 2, 1, 0.0)
    assert d2l.num_parameters(untied) - d2l.num_parameters(net) == 2 * 50 * 16
    with pytest.raises(ValueError, match="src_vocab_size must equal"):
        d2l.make_transformer(50, 60, 16, 32, 2, 1, 0.0, share_embeddings=True)


def test_transformer_config_builds_the_model_and_checks_its_fields():
    config = d2l.TransformerConfig(20, 30, num_hiddens=16, ffn_num_hiddens=32, num_heads=2,
                                   num_layers=3, dropout=0.0, norm_first=True)
    net = config.build()
    assert net.config is config and len(net.decoder.blks) == 3
    assert [blk.layer_idx for blk in net.decoder.blks] == [0, 1, 2]
    assert net.decoder.blks[0].residual1.norm_first and net.encoder.embedding.num_embeddings == 20
    assert d2l.make_transformer(20, 30, 16, 32, 2, 3, 0.0, norm_first=True).config == config
    with pytest.raises(TypeError, match="num_layers must be a non-negative int"):
        d2l.TransformerConfig(20, 30, num_layers=2.0)
    with pytest.raises(ValueError, match="num_heads must divide num_hiddens = 16"):
        d2l.TransformerConfig(20, 30, num_hiddens=16, num_heads=3)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        d2l.TransformerConfig(20, 30, dropout=1.0)


def test_transformer_base_is_the_papers_configuration():
    config = d2l.transformer_base()
    assert isinstance(config, d2l.TransformerConfig) and config.share_embeddings
    assert d2l.transformer_base(100, num_layers=2).num_layers == 2
    net = config.build()
    assert len(net.encoder.blks) == len(net.decoder.blks) == 6
    assert net.encoder.embedding.weight.shape == (37000, 512)
    blk = net.encoder.blks[0]
    assert blk.attention.num_heads == 8 and blk.ffn.dense1.out_features == 2048
    assert blk.residual1.addnorm.dropout.p == 0.1
    n = d2l.num_parameters(net)
    assert 60e6 < n < 66e6  # the paper reports 65M for base (Table 3)


def test_num_parameters_counts_shared_once():
    lin = nn.Linear(3, 3)
    seq = nn.Sequential(lin, lin)
    assert d2l.num_parameters(seq) == 12


def test_decoder_and_encoder_decoder_built_by_hand_like_d2l():
    """d2l's way: TransformerEncoder, TransformerDecoder and EncoderDecoder built separately."""
    config = d2l.TransformerConfig(20, 30, num_hiddens=16, ffn_num_hiddens=32, num_heads=4,
                                   num_layers=2, dropout=0.0)
    enc, dec = d2l.TransformerEncoder(config), d2l.TransformerDecoder(config)
    assert all(isinstance(b, d2l.DecoderBlock) for b in dec.blks) and len(dec.blks) == 2
    net = d2l.EncoderDecoder(enc, dec).eval()
    X, valid = torch.randint(0, 20, (2, 5)), torch.tensor([5, 3])
    Y = torch.randint(0, 30, (2, 4))
    logits, state = net(X, Y, valid)
    assert logits.shape == (2, 4, 30)
    state2 = dec.init_state(enc(X, valid), valid)
    torch.testing.assert_close(dec(Y, state2)[0], logits)
    blk = d2l.DecoderBlock(config, 1)
    assert blk.layer_idx == 1 and blk.attention1.W_q.bias is None  # bias=False


def test_blocks_take_the_config_and_the_vocabulary_is_needed_only_to_embed():
    config = d2l.TransformerConfig(num_hiddens=8, ffn_num_hiddens=16, num_heads=2,
                                   num_layers=1, dropout=0.0, bias=True)
    blk = d2l.EncoderBlock(config)  # a block needs no vocabulary
    assert blk.attention.W_q.bias is not None and blk.ffn.dense1.out_features == 16
    with pytest.raises(ValueError, match="src_vocab_size must be set"):
        d2l.TransformerEncoder(config)
    with pytest.raises(ValueError, match="tgt_vocab_size must be set"):
        d2l.TransformerDecoder(config)
    with pytest.raises(TypeError, match="bias must be a bool"):
        d2l.TransformerConfig(bias=1)
    with pytest.raises(TypeError, match="src_vocab_size"):
        d2l.TransformerConfig(src_vocab_size=10.0)
