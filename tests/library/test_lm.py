"""d2lmini.lm against the references the field trusts: torch.nn.RMSNorm, PyTorch's grouped-query
attention, Hugging Face transformers' Llama and GPT-2 (same weights copied in), and sampling
checked by hand cases and by a chi-square test of many seeded draws."""

import math

import pytest
import torch
import torch.nn.functional as F
from scipy import stats

import d2lmini as d2l
from d2lmini import lm



def tiny(**overrides):
    settings = dict(vocab_size=50, num_hiddens=32, num_heads=4, num_layers=2, max_len=64)
    settings.update(overrides)
    return lm.LMConfig(**settings)


# ------------------------------------------------------------------------------ parts

def test_rmsnorm_equals_torch():
    torch.manual_seed(0)
    ours, ref = lm.RMSNorm(16, eps=1e-6), torch.nn.RMSNorm(16, eps=1e-6)
    with torch.no_grad():
        ours.weight.normal_()
        ref.weight.copy_(ours.weight)
    X = torch.randn(3, 5, 16) * 7
    torch.testing.assert_close(ours(X), ref(X))


def test_rmsnorm_in_bfloat16_normalises_in_float32():
    X = torch.randn(4, 64) * 100
    out = lm.RMSNorm(64).bfloat16()(X.bfloat16())
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float(), torch.nn.RMSNorm(64, eps=1e-5)(X),
                               atol=0.02, rtol=0.02)


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_grouped_attention_equals_sdpa_enable_gqa(num_kv_heads):
    torch.manual_seed(1)
    config = tiny(num_kv_heads=num_kv_heads, position="none")
    attn = lm.CausalSelfAttention(config).eval()
    X = torch.randn(2, 7, 32)
    q = attn.W_q(X).unflatten(-1, (4, 8)).transpose(1, 2)
    k = attn.W_k(X).unflatten(-1, (num_kv_heads, 8)).transpose(1, 2)
    v = attn.W_v(X).unflatten(-1, (num_kv_heads, 8)).transpose(1, 2)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    torch.testing.assert_close(attn(X), attn.W_o(ref.transpose(1, 2).flatten(2)))


def test_grouped_attention_equals_mha_with_repeated_heads():
    torch.manual_seed(2)
    gqa = lm.CausalSelfAttention(tiny(num_kv_heads=2, position="rope")).eval()
    mha = lm.CausalSelfAttention(tiny(num_kv_heads=4, position="rope")).eval()
    with torch.no_grad():
        mha.W_q.weight.copy_(gqa.W_q.weight)
        mha.W_o.weight.copy_(gqa.W_o.weight)
        for name in ("W_k", "W_v"):  # each grouped head serves two consecutive query heads
            W = getattr(gqa, name).weight.unflatten(0, (2, 8))
            getattr(mha, name).weight.copy_(W.repeat_interleave(2, dim=0).flatten(0, 1))
    X = torch.randn(3, 9, 32)
    torch.testing.assert_close(gqa(X), mha(X))


@pytest.mark.parametrize("overrides", [
    dict(num_kv_heads=1), dict(num_kv_heads=2, qk_norm=True),
    dict(position="learned", norm="layernorm", ffn="gelu", bias=True, tie_output=True),
    dict(position="sinusoidal", norm_first=False, ffn="relu"),
])
def test_cache_decoding_equals_full_recompute(overrides):
    torch.manual_seed(3)
    model = tiny(**overrides).build().eval()
    X = torch.randint(0, 50, (2, 12))
    full = model(X)
    cache = model.new_cache()
    steps = [model(X[:, :5], cache)] + [model(X[:, t:t + 1], cache) for t in range(5, 12)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)


def test_cache_shrinks_by_the_group_size():
    sizes = {}
    for h_kv in (4, 2, 1):
        model = tiny(num_kv_heads=h_kv).build().eval()
        cache = model.new_cache()
        model(torch.randint(0, 50, (3, 10)), cache)
        sizes[h_kv] = cache.nbytes
    # layers x (k and v) x B x h_kv x T x d_h x 4 bytes
    assert sizes[4] == 2 * 2 * 3 * 4 * 10 * 8 * 4
    assert sizes[4] == 2 * sizes[2] == 4 * sizes[1]


def test_generate_with_and_without_cache_agree():
    torch.manual_seed(4)
    model = tiny(num_kv_heads=2).build()
    prompt = torch.randint(0, 50, (2, 4))
    a = lm.generate(model, prompt, 10, temperature=0.8, top_p=0.9,
                    generator=torch.Generator().manual_seed(7))
    b = lm.generate(model, prompt, 10, temperature=0.8, top_p=0.9,
                    generator=torch.Generator().manual_seed(7), use_cache=False)
    assert a.shape == (2, 14) and torch.equal(a, b) and torch.equal(a[:, :4], prompt)
    assert model.training  # restored


def test_rope_layouts_agree_up_to_the_permutation():
    torch.manual_seed(5)
    X = torch.randn(2, 3, 11, 16, dtype=torch.float64)
    pos = torch.arange(4, 15)
    p = lm.rope_permutation(16)
    torch.testing.assert_close(lm.apply_rope(X[..., p], pos, layout="half"),
                               lm.apply_rope(X, pos, layout="interleaved")[..., p])


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_scores_depend_on_relative_position_only(layout):
    torch.manual_seed(6)
    q, k = torch.randn(16, dtype=torch.float64), torch.randn(16, dtype=torch.float64)
    def score(m, n):
        qm = lm.apply_rope(q[None], torch.tensor([m]), layout=layout)
        kn = lm.apply_rope(k[None], torch.tensor([n]), layout=layout)
        return float(qm @ kn.T)
    assert score(3, 10) == pytest.approx(score(50, 57), abs=1e-12)
    assert score(0, 0) == pytest.approx(float(q @ k), abs=1e-12)


def test_rope_interleaved_matches_the_rotation_matrix():
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
    out = lm.apply_rope(x, torch.tensor([2]), base=100.0)
    for i, theta in enumerate((1.0, 100 ** -0.5)):
        c, s = math.cos(2 * theta), math.sin(2 * theta)
        a, b = x[0, 2 * i], x[0, 2 * i + 1]
        assert out[0, 2 * i].item() == pytest.approx(c * a - s * b)
        assert out[0, 2 * i + 1].item() == pytest.approx(s * a + c * b)


def test_swiglu_default_width_matches_the_relu_parameter_count():
    relu = lm.FeedForward(lm.LMConfig(10, num_hiddens=96, ffn="relu"))
    swiglu = lm.FeedForward(lm.LMConfig(10, num_hiddens=96, ffn="swiglu"))
    assert d2l.num_parameters(relu) == d2l.num_parameters(swiglu) == 8 * 96 * 96


@pytest.mark.parametrize("bad, message", [
    (dict(norm="batchnorm"), "norm must be one of"),
    (dict(num_kv_heads=3), "num_kv_heads must divide"),
    (dict(num_heads=5), "num_heads must divide"),
    (dict(num_hiddens=36, num_heads=12), "even"),
    (dict(dropout=1.0), "dropout"),
])
def test_config_rejects_bad_settings(bad, message):
    with pytest.raises(ValueError, match=message):
        tiny(**bad)


def test_positions_beyond_the_table_are_an_error():
    model = tiny(position="learned", max_len=8).build()
    with pytest.raises(ValueError, match="exceed max_len = 8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    assert tiny(position="rope", max_len=8).build()(torch.zeros(1, 20, dtype=torch.long)).shape \
        == (1, 20, 50)


# ------------------------------------------------------------------------------ Hugging Face

def llama_pair(num_kv_heads=2):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(7)
    config = tiny(num_kv_heads=num_kv_heads, ffn_num_hiddens=80, norm_eps=1e-6,
                  rope_base=500000.0)
    ours = config.build().eval()
    hf_config = LlamaConfig(
        vocab_size=50, hidden_size=32, intermediate_size=80, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=num_kv_heads, rms_norm_eps=1e-6,
        max_position_embeddings=64, tie_word_embeddings=False, attention_bias=False,
        mlp_bias=False, rope_parameters={"rope_type": "default", "rope_theta": 500000.0})
    hf = LlamaForCausalLM(hf_config).eval()
    names = {"model.embed_tokens": "embedding", "model.norm": "final_norm", "lm_head": "head"}
    for i in range(2):
        a, b = f"model.layers.{i}.", f"blocks.{i}."
        names.update({a + "input_layernorm": b + "norm1",
                      a + "post_attention_layernorm": b + "norm2",
                      **{a + f"self_attn.{x}_proj": b + f"attention.W_{x}" for x in "qkvo"},
                      a + "mlp.gate_proj": b + "ffn.W_1", a + "mlp.up_proj": b + "ffn.W_up",
                      a + "mlp.down_proj": b + "ffn.W_2"})
    ours_params = dict(ours.named_parameters())
    with torch.no_grad():
        for hf_name, p in hf.named_parameters():
            module, _, kind = hf_name.rpartition(".")
            p.copy_(ours_params[names[module] + "." + kind])
    assert len(names) == len(list(hf.named_parameters()))
    return ours, hf


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_llama_configuration_gives_transformers_logits(num_kv_heads):
    ours, hf = llama_pair(num_kv_heads)
    X = torch.randint(0, 50, (2, 40))
    with torch.no_grad():
        torch.testing.assert_close(ours(X), hf(X).logits, atol=1e-5, rtol=0)


def test_llama_greedy_generation_matches_transformers():
    ours, hf = llama_pair()
    prompt = torch.randint(0, 50, (1, 5))
    ref = hf.generate(prompt, max_new_tokens=12, do_sample=False, pad_token_id=0)
    assert torch.equal(lm.generate(ours, prompt, 12, temperature=0), ref)


def test_gpt2_configuration_gives_transformers_logits():
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(8)
    ours = tiny(norm="layernorm", position="learned", ffn="gelu_tanh", bias=True,
                tie_output=True, rope_layout="half").build().eval()
    hf = GPT2LMHeadModel(GPT2Config(
        vocab_size=50, n_positions=64, n_embd=32, n_layer=2, n_head=4,
        activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        layer_norm_epsilon=1e-5)).eval()
    sd = ours.state_dict()
    with torch.no_grad():
        t = hf.transformer
        t.wte.weight.copy_(sd["embedding.weight"])
        t.wpe.weight.copy_(sd["pos_embedding.weight"])
        t.ln_f.weight.copy_(sd["final_norm.weight"])
        t.ln_f.bias.copy_(sd["final_norm.bias"])
        for i, block in enumerate(t.h):
            b = f"blocks.{i}."
            for hf_norm, norm in ((block.ln_1, "norm1"), (block.ln_2, "norm2")):
                hf_norm.weight.copy_(sd[b + norm + ".weight"])
                hf_norm.bias.copy_(sd[b + norm + ".bias"])
            # GPT-2's Conv1D stores (in, out): the transpose of nn.Linear's weight
            qkv = [b + f"attention.W_{x}" for x in "qkv"]
            block.attn.c_attn.weight.copy_(torch.cat([sd[n + ".weight"] for n in qkv]).T)
            block.attn.c_attn.bias.copy_(torch.cat([sd[n + ".bias"] for n in qkv]))
            for conv, lin in ((block.attn.c_proj, "attention.W_o"), (block.mlp.c_fc, "ffn.W_1"),
                              (block.mlp.c_proj, "ffn.W_2")):
                conv.weight.copy_(sd[b + lin + ".weight"].T)
                conv.bias.copy_(sd[b + lin + ".bias"])
    assert hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr()
    X = torch.randint(0, 50, (2, 30))
    with torch.no_grad():
        torch.testing.assert_close(ours(X), hf(X).logits, atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------ sampling

def test_top_p_keeps_the_smallest_set_with_enough_mass():
    logits = torch.tensor([[0.5, 0.25, 0.125, 0.125]]).log()
    kept = lambda p: torch.isfinite(lm.top_p_filter(logits, p))[0].tolist()  # noqa: E731
    assert kept(0.5) == [True, False, False, False]  # 0.5 alone reaches 0.5
    assert kept(0.6) == [True, True, False, False]
    assert kept(0.75) == [True, True, False, False]
    assert kept(0.8) == [True, True, True, False]  # ties: the lower index first
    assert kept(1.0) == [True] * 4
    assert kept(1e-9) == [True, False, False, False]  # the most probable token always stays


def test_top_p_breaks_ties_by_index_and_rows_are_independent():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 2.0]])
    kept = torch.isfinite(lm.top_p_filter(logits, 0.5))
    assert kept[0].tolist() == [True, True, False, False]
    assert kept[1].tolist() == [True, False, False, False]


def test_top_k_keeps_k_tokens():
    logits = torch.tensor([[1.0, 4.0, 3.0, 2.0]])
    assert torch.isfinite(lm.top_k_filter(logits, 2))[0].tolist() == [False, True, True, False]


def test_sampled_frequencies_match_the_truncated_distribution():
    probs = torch.tensor([0.4, 0.3, 0.15, 0.1, 0.05])
    logits = probs.log().expand(20000, 5)
    draws = lm.sample_next(logits, temperature=1.0, top_p=0.8,
                           generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(draws, minlength=5)
    assert counts[3:].sum() == 0  # outside the nucleus {0, 1, 2}
    expected = probs[:3] / probs[:3].sum() * len(draws)
    chi2 = float(((counts[:3] - expected) ** 2 / expected).sum())
    assert chi2 < stats.chi2.ppf(0.999, df=2)


def test_temperature_zero_is_greedy_and_bad_arguments_are_errors():
    logits = torch.tensor([[0.1, 2.0, 0.3]])
    assert lm.sample_next(logits, temperature=0).item() == 1
    with pytest.raises(ValueError, match="temperature"):
        lm.sample_next(logits, temperature=-1.0)
    with pytest.raises(ValueError, match="p must be"):
        lm.top_p_filter(logits, 1.5)
    with pytest.raises(ValueError, match=r"shape \(B, V\)"):
        lm.sample_next(logits[0])


# ------------------------------------------------------------------------------ optimisation

def test_adamw_decays_matrices_only():
    model = tiny(bias=True, norm="layernorm").build()
    decay, no_decay = lm.make_adamw(model, 1e-3, weight_decay=0.1).param_groups
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decay["params"])
    assert all(p.dim() == 1 for p in no_decay["params"]) and no_decay["params"]


def test_warmup_cosine_schedule():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = lm.warmup_cosine(opt, warmup_steps=4, total_steps=14, min_lr_ratio=0.1)
    lrs = []
    for _ in range(14):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    lrs.append(opt.param_groups[0]["lr"])
    cosine = [0.1 + 0.9 * (1 + math.cos(math.pi * j / 10)) / 2 for j in range(11)]
    assert lrs == pytest.approx([0.25, 0.4375, 0.625, 0.8125] + cosine)


def test_generate_slides_a_window_of_context_tokens():
    torch.manual_seed(9)
    model = tiny(position="learned", max_len=8).build().eval()
    prompt = torch.randint(0, 50, (2, 3))
    out = lm.generate(model, prompt, 12, temperature=0, context=8)  # 15 > max_len = 8
    assert out.shape == (2, 15)
    for t in range(8, 15):  # every token past the window is the greedy choice given the last 8
        with torch.no_grad():
            expected = model(out[:, t - 8:t])[:, -1].argmax(-1)
        assert torch.equal(out[:, t], expected)
    same = lm.generate(model, prompt, 5, temperature=0, context=8)  # within the window: cached
    assert torch.equal(same, out[:, :8])
    with pytest.raises(ValueError, match="context"):
        lm.generate(model, prompt, 5, context=0)
