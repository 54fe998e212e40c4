"""Tests of d2lmini.attention: masked softmax, additive / dot-product / multi-head attention."""

import math

import pytest
import torch
from torch import nn

import d2lmini as d2l


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_lengths_to_mask():
    mask = d2l.lengths_to_mask(torch.tensor([[0, 2], [3, 1]]), 3)
    assert mask.dtype == torch.bool and mask.shape == (2, 2, 3)
    assert mask.tolist() == [[[False] * 3, [True, True, False]],
                             [[True] * 3, [True, False, False]]]


def test_masked_softmax_rejects_lengths_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(2,\) or \(2, 3\)"):
        d2l.masked_softmax(torch.rand(2, 3, 4), torch.tensor([1, 2, 3]))


def test_masked_softmax_1d_valid_lens():
    X = torch.rand(2, 3, 5)
    W = d2l.masked_softmax(X, torch.tensor([2, 4]))
    assert W.shape == (2, 3, 5)
    assert torch.all(W[0, :, 2:] == 0) and torch.all(W[1, :, 4:] == 0)
    torch.testing.assert_close(W.sum(-1), torch.ones(2, 3))
    torch.testing.assert_close(W[0, :, :2], torch.softmax(X[0, :, :2], dim=-1))


def test_masked_softmax_2d_valid_lens():
    X = torch.rand(2, 2, 4)
    W = d2l.masked_softmax(X, torch.tensor([[1, 3], [2, 4]]))
    assert torch.all(W[0, 0, 1:] == 0) and W[0, 0, 0] == 1
    assert torch.all(W[0, 1, 3:] == 0)
    torch.testing.assert_close(W[1, 1], torch.softmax(X[1, 1], -1))


def test_masked_softmax_zero_length_row_is_all_zero():
    W = d2l.masked_softmax(torch.rand(2, 2, 4), torch.tensor([0, 3]))
    assert torch.all(W[0] == 0)  # attends to nothing (d2l gives uniform 0.25 here)
    torch.testing.assert_close(W[1].sum(-1), torch.ones(2))


def test_masked_softmax_none_is_plain_softmax_and_half_precision():
    X = torch.randn(2, 3, 4)
    torch.testing.assert_close(d2l.masked_softmax(X, None), torch.softmax(X, -1))
    W = d2l.masked_softmax(X.half(), torch.tensor([0, 2]))
    assert not torch.isnan(W).any() and torch.all(W[0] == 0)


def test_masked_softmax_gradients_are_finite_with_empty_rows():
    X = torch.randn(2, 3, 4, requires_grad=True)
    d2l.masked_softmax(X, torch.tensor([0, 2])).sum().backward()
    assert torch.isfinite(X.grad).all()


def test_additive_attention_shapes_and_weights():
    attention = d2l.AdditiveAttention(num_hiddens=8, dropout=0.1, key_size=2, query_size=20)
    attention.eval()
    queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.ones((2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    out = attention(queries, keys, values, torch.tensor([2, 6]))
    assert out.shape == (2, 1, 4)
    # identical keys -> uniform weights over the valid ones
    torch.testing.assert_close(attention.attention_weights[0, 0, :2], torch.full((2,), 0.5))
    torch.testing.assert_close(out[0, 0], values[0, :2].mean(0))


def test_additive_attention_lazy_sizes():
    attention = d2l.AdditiveAttention(8, 0.0)
    out = attention(torch.randn(3, 2, 5), torch.randn(3, 4, 7), torch.randn(3, 4, 6))
    assert out.shape == (3, 2, 6)


def test_dot_product_attention_matches_formula():
    attention = d2l.DotProductAttention(dropout=0.0)
    Q, K, V = torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 4)
    out = attention(Q, K, V)
    expected = torch.softmax(Q @ K.transpose(1, 2) / math.sqrt(8), -1) @ V
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(
        out, torch.nn.functional.scaled_dot_product_attention(Q, K, V))


def test_transpose_qkv_roundtrip_and_layout():
    X = torch.randn(2, 5, 12)
    Y = d2l.transpose_qkv(X, 3)
    assert Y.shape == (6, 5, 4)
    torch.testing.assert_close(Y[1], X[0, :, 4:8])  # batch 0, head 1
    torch.testing.assert_close(d2l.transpose_output(Y, 3), X)


def test_multihead_attention_shapes_and_stored_weights():
    mha = d2l.MultiHeadAttention(num_hiddens=16, num_heads=4, dropout=0.0,
                                 store_attention_weights=True)
    X, Y = torch.randn(2, 4, 16), torch.randn(2, 6, 16)
    out = mha(X, Y, Y, torch.tensor([3, 2]))
    assert out.shape == (2, 4, 16)
    assert mha.attention_weights.shape == (2, 4, 4, 6)
    assert torch.all(mha.attention_weights[0, :, :, 3:] == 0)


def test_multihead_matches_manual_per_head_computation():
    mha = d2l.MultiHeadAttention(8, 2, 0.0, bias=True).eval()
    X, Y = torch.randn(1, 3, 8), torch.randn(1, 4, 8)
    out = mha(X, Y, Y)
    heads = []
    q, k, v = mha.W_q(X), mha.W_k(Y), mha.W_v(Y)
    for i in range(2):  # the loop the module avoids
        s = slice(4 * i, 4 * i + 4)
        w = torch.softmax(q[..., s] @ k[..., s].transpose(1, 2) / 2.0, -1)
        heads.append(w @ v[..., s])
    torch.testing.assert_close(out, mha.W_o(torch.cat(heads, -1)))


@pytest.mark.parametrize("valid_lens", [None, torch.tensor([3, 1]),
                                        torch.tensor([[1, 2, 3, 4], [4, 0, 2, 1]])])
@pytest.mark.parametrize("self_attention", [True, False])
def test_fused_and_explicit_paths_agree(valid_lens, self_attention):
    mha = d2l.MultiHeadAttention(16, 4, 0.0).eval()
    X = torch.randn(2, 4, 16)
    K = X if self_attention else torch.randn(2, 4, 16)
    fused = mha(X, K, K, valid_lens)  # the default: the fused kernel, nothing stored
    assert mha.attention_weights is None
    with d2l.store_attention_weights(mha):
        explicit = mha(X, K, K, valid_lens)
        assert mha.attention_weights.shape == (2, 4, 4, 4)
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=1e-5)
    assert not mha.store_attention_weights  # restored by the context manager


@pytest.mark.parametrize("valid_lens", [None, torch.tensor([6, 0, 2]),
                                        torch.tensor([[1, 6, 3], [0, 2, 5], [4, 4, 4]])])
def test_fused_path_hands_sdpa_4d_heads_and_one_mask_for_all_heads(monkeypatch, valid_lens):
    # 3-D (B*h, T, d_h) inputs make SDPA fall back to its math kernel: keep the 4-D layout.
    import d2lmini.attention as attention_module
    seen = []
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def spy(q, k, v, attn_mask=None, **kwargs):
        seen.append((q.shape, k.shape, v.shape, None if attn_mask is None else attn_mask.shape))
        return sdpa(q, k, v, attn_mask=attn_mask, **kwargs)

    monkeypatch.setattr(attention_module.F, "scaled_dot_product_attention", spy)
    mha = d2l.MultiHeadAttention(16, 4, 0.0).eval()  # fused by default
    X, KV = torch.randn(3, 3, 16), torch.randn(3, 6, 16)  # Q = 3 queries, K = 6 keys
    fused = mha(X, KV, KV, valid_lens)
    q_shape, k_shape, v_shape, mask_shape = seen[-1]
    assert (q_shape, k_shape, v_shape) == ((3, 4, 3, 4), (3, 4, 6, 4), (3, 4, 6, 4))
    expected_mask = {None: None, 1: (3, 1, 1, 6), 2: (3, 1, 3, 6)}
    assert mask_shape == expected_mask[None if valid_lens is None else valid_lens.dim()]
    with d2l.store_attention_weights(mha, True):
        explicit = mha(X, KV, KV, valid_lens)
    torch.testing.assert_close(fused, explicit, atol=1e-5, rtol=1e-5)


def test_fused_path_gradients_match():
    mha = d2l.MultiHeadAttention(8, 2, 0.0, store_attention_weights=True)
    X = torch.randn(2, 3, 8)
    vl = torch.tensor([2, 3])
    mha(X, X, X, vl).sum().backward()
    g1 = mha.W_q.weight.grad.clone()
    mha.zero_grad()
    d2l.store_attention_weights(mha, False)
    mha(X, X, X, vl).sum().backward()
    torch.testing.assert_close(mha.W_q.weight.grad, g1, atol=1e-5, rtol=1e-4)


def test_multihead_agrees_with_torch_multiheadattention():
    mha = d2l.MultiHeadAttention(16, 4, 0.0).eval()
    ref = nn.MultiheadAttention(16, 4, bias=False, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight]))
        ref.out_proj.weight.copy_(mha.W_o.weight)
    X, Y = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    valid_lens = torch.tensor([5, 2])
    pad_mask = torch.arange(5)[None, :] >= valid_lens[:, None]
    expected, _ = ref(X, Y, Y, key_padding_mask=pad_mask)
    torch.testing.assert_close(mha(X, Y, Y, valid_lens), expected, atol=1e-5, rtol=1e-5)


def test_project_kv_and_attend_compose_to_forward():
    mha = d2l.MultiHeadAttention(8, 2, 0.0).eval()
    X, Y = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    k, v = mha.project_kv(Y, Y)
    assert k.shape == v.shape == (2, 2, 5, 4)  # (B, h, K, d_h)
    q = mha.split_heads(mha.W_q(X))
    torch.testing.assert_close(q.transpose(1, 2).flatten(2), mha.W_q(X))
    torch.testing.assert_close(mha.attend(q, k, v), mha(X, Y, Y))
    # the heads of split_heads are those of d2l's transpose_qkv
    torch.testing.assert_close(q.flatten(0, 1), d2l.transpose_qkv(mha.W_q(X), 2))


@pytest.mark.parametrize("bias", [False, True])
def test_fused_self_attention_projection_equals_three_projections(bias):
    mha = d2l.MultiHeadAttention(8, 2, 0.0, bias=bias)
    X = torch.randn(2, 3, 8)
    for fused, W in zip(mha.project_qkv(X), (mha.W_q, mha.W_k, mha.W_v)):
        torch.testing.assert_close(fused, mha.split_heads(W(X)))


@pytest.mark.parametrize("store", [True, False])
def test_is_causal_is_the_lower_triangular_mask(store):
    mha = d2l.MultiHeadAttention(16, 4, 0.0, store_attention_weights=store).eval()
    X = torch.randn(2, 5, 16)
    q, k, v = mha.project_qkv(X)
    causal = mha.attend(q, k, v, is_causal=True)
    lens = torch.arange(1, 6).expand(2, 5)  # query i sees keys 0 .. i
    with d2l.store_attention_weights(mha, True):
        torch.testing.assert_close(causal, mha(X, X, X, lens), atol=1e-5, rtol=1e-5)
    tril = torch.ones(5, 5, dtype=torch.bool).tril()
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=tril)
    torch.testing.assert_close(causal, mha.W_o(expected.transpose(1, 2).flatten(2)),
                               atol=1e-5, rtol=1e-5)


def test_multihead_attention_checks_its_inputs():
    mha = d2l.MultiHeadAttention(8, 2, 0.0)
    with pytest.raises(ValueError, match="must agree on B and K"):
        mha(torch.randn(2, 3, 8), torch.randn(2, 4, 8), torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match="num_heads must be a positive divisor"):
        d2l.MultiHeadAttention(8, 3, 0.0)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        d2l.store_attention_weights("not a module")
    with pytest.raises(TypeError, match="flag must be a bool"):
        d2l.store_attention_weights(mha, 1)


def test_store_attention_weights_plain_call_persists():
    net = nn.Sequential(d2l.MultiHeadAttention(8, 2, 0.0), d2l.MultiHeadAttention(8, 2, 0.0))
    assert not any(m.store_attention_weights for m in net)  # the default: fused
    d2l.store_attention_weights(net)
    assert all(m.store_attention_weights for m in net)


def test_dropout_on_weights_is_active_only_in_training():
    mha = d2l.MultiHeadAttention(8, 2, 0.5)
    X = torch.randn(1, 6, 8)
    mha.train()
    a, b = mha(X, X, X), mha(X, X, X)
    assert not torch.allclose(a, b)
    mha.eval()
    torch.testing.assert_close(mha(X, X, X), mha(X, X, X))
