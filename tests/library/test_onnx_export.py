"""d2lmini.book.translator: the translator as ONNX graphs, run by ONNX Runtime (Python here; the
book's page runs the same graphs with ONNX Runtime Web, tests/build/test_translator.py), and the
panel that carries them into the page."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
import pytest
import torch

import d2lmini as d2l
from d2lmini import book
from d2lmini.book import translator as export

SOURCES = [["go", "."], ["i", "lost", "."], ["he's", "calm", "."], ["i'm", "home", "."],
           ["tom", "likes", "the", "old", "red", "car", "very", "much", "."], ["xyzzy"]]


def _vocab(words):
    return d2l.Vocab([words, words], reserved_tokens=["<pad>", "<bos>", "<eos>"])


@pytest.fixture(scope="module")
def vocabs():
    src = _vocab(sorted({w for s in SOURCES for w in s if w != "xyzzy"}) + ["cat", "dog"])
    tgt = _vocab(["va", "!", "j'ai", "perdu", ".", "il", "est", "calme", "je", "suis", "chez",
                  "moi", "tom", "aime", "la", "vieille", "voiture", "rouge"])
    return src, tgt


@pytest.fixture(scope="module")
def net(vocabs):
    torch.manual_seed(0)
    config = d2l.TransformerConfig(len(vocabs[0]), len(vocabs[1]), num_hiddens=32,
                                   ffn_num_hiddens=64, num_heads=4, num_layers=2)
    return config.build().eval()


@pytest.fixture(scope="module")
def half(net, vocabs):
    return book.export_translator(net, *vocabs, num_steps=8, examples=SOURCES, num_attention=3)


@pytest.fixture(scope="module")
def full(net, vocabs):
    return book.export_translator(net, *vocabs, num_steps=8, precision="float32")


def _sessions(ex):
    return (ort.InferenceSession(ex.encoder, providers=["CPUExecutionProvider"]),
            ort.InferenceSession(ex.decoder, providers=["CPUExecutionProvider"]))


# ---------------------------------------------------------------------------------------------
# round_weights
# ---------------------------------------------------------------------------------------------

def test_round_weights_rounds_a_copy(net):
    before = {k: v.clone() for k, v in net.state_dict().items()}
    rounded = book.round_weights(net)
    for name, value in rounded.state_dict().items():
        assert value.dtype == before[name].dtype
        if value.is_floating_point():
            assert torch.equal(value, value.half().float()), name  # representable in float16
            assert torch.allclose(value, before[name], rtol=1e-3, atol=1e-4)
        assert torch.equal(net.state_dict()[name], before[name])  # the model is untouched
    assert any(not torch.equal(rounded.state_dict()[k], before[k]) for k in before)
    copy32 = book.round_weights(net, "float32")
    assert copy32 is not net
    assert all(torch.equal(copy32.state_dict()[k], before[k]) for k in before)


def test_round_weights_errors(net):
    with pytest.raises(ValueError, match="precision must be one of"):
        book.round_weights(net, "int8")
    with pytest.raises(TypeError, match="net must be a torch.nn.Module"):
        book.round_weights("net")


# ---------------------------------------------------------------------------------------------
# the graphs compute what PyTorch computes
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("precision", ["float16", "float32"])
def test_graphs_equal_pytorch(net, half, full, precision):
    ex = half if precision == "float16" else full
    model = book.round_weights(net, precision).eval()
    encoder, decoder = _sessions(ex)
    gen = torch.Generator().manual_seed(1)
    for S, B, T in [(1, 1, 1), (5, 1, 3), (8, 3, 6)]:
        src = torch.randint(4, model.encoder.embedding.num_embeddings, (B, S), generator=gen)
        src_len = torch.full((B,), S)
        memory = encoder.run(None, {"src": src.numpy(), "src_len": src_len.numpy()})[0]
        tgt = torch.randint(4, 20, (B, T), generator=gen)
        logits, cross = decoder.run(None, {"tgt": tgt.numpy(), "memory": memory,
                                           "src_len": src_len.numpy()})
        with torch.no_grad(), d2l.store_attention_weights(model):
            mem_t = model.encoder(src, src_len)
            out, _ = model.decoder(tgt, model.decoder.init_state(mem_t, src_len))
            cross_t = torch.stack([w for _, w in model.decoder.attention_weights])
        np.testing.assert_allclose(memory, mem_t.numpy(), atol=1e-5)
        np.testing.assert_allclose(logits, out[:, -1].numpy(), atol=1e-5)
        assert cross.shape == (2, B, 4, T, S)
        np.testing.assert_allclose(cross, cross_t.numpy(), atol=1e-6)


def _weight_bytes(graph: bytes) -> int:
    initializers = onnx.load_from_string(graph).graph.initializer
    return sum(numpy_helper.to_array(i).nbytes for i in initializers)


def test_float16_halves_the_weights(half, full):
    """The weights take half the bytes (the rest of a graph, its nodes, is the same)."""
    for part in ("encoder", "decoder"):
        assert _weight_bytes(getattr(half, part)) < 0.52 * _weight_bytes(getattr(full, part))
    assert half.num_bytes < full.num_bytes
    types = {i.data_type for i in onnx.load_from_string(half.decoder).graph.initializer}
    assert onnx.TensorProto.FLOAT16 in types
    assert half.config["precision"] == "float16" and full.config["precision"] == "float32"


def test_greedy_through_the_graphs_equals_greedy_search(net, half, vocabs):
    """Greedy decoding by hand with ONNX Runtime (the whole prefix at every step, as the page
    decodes) gives d2lmini's tokens."""
    src_vocab, tgt_vocab = vocabs
    model = book.round_weights(net)
    encoder, decoder = _sessions(half)
    for source in SOURCES:
        X, X_len = d2l.build_array_nmt([source], src_vocab, 8)
        ids = X[:, :int(X_len[0])].numpy()
        memory = encoder.run(None, {"src": ids, "src_len": X_len.numpy()})[0]
        out = [tgt_vocab["<bos>"]]
        for _ in range(int(X_len[0]) + 50):
            logits = decoder.run(None, {"tgt": np.array([out]), "memory": memory,
                                        "src_len": X_len.numpy()})[0]
            if int(logits[0].argmax()) == tgt_vocab["<eos>"]:
                break
            out.append(int(logits[0].argmax()))
        expected = d2l.translate(model, [source], src_vocab, tgt_vocab, 8, "cpu",
                                 max_len=lambda n: n + 50)[0]
        assert tgt_vocab.to_tokens(out[1:]) == expected


# ---------------------------------------------------------------------------------------------
# what a runtime needs besides: the configuration and the examples
# ---------------------------------------------------------------------------------------------

def test_config(half, vocabs):
    src_vocab, tgt_vocab = vocabs
    c = half.config
    assert c["src_tokens"] == src_vocab.idx_to_token and c["tgt_tokens"] == tgt_vocab.idx_to_token
    assert (c["unk"], c["pad"], c["bos"], c["eos"]) == tuple(
        tgt_vocab[t] for t in ("<unk>", "<pad>", "<bos>", "<eos>"))
    assert (c["src_unk"], c["src_eos"]) == (src_vocab["<unk>"], src_vocab["<eos>"])
    assert {k: c[k] for k in ("num_steps", "beam_size", "alpha", "penalty", "max_extra", "sep",
                              "num_layers", "num_heads", "num_hiddens")} == {
        "num_steps": 8, "beam_size": 4, "alpha": 0.6, "penalty": "gnmt", "max_extra": 50,
        "sep": " ", "num_layers": 2, "num_heads": 4, "num_hiddens": 32}
    json.loads(json.dumps(c))  # JSON-ready
    payload = half.payload()
    assert set(payload) == {"config", "encoder", "decoder"}


def test_examples_are_d2lminis_translations(net, half, vocabs):
    src_vocab, tgt_vocab = vocabs
    model = book.round_weights(net)
    settings = dict(max_len=lambda n: n + 50, batch_size=1)
    greedy = d2l.translate(model, SOURCES, src_vocab, tgt_vocab, 8, "cpu", **settings)
    beam = d2l.translate(model, SOURCES, src_vocab, tgt_vocab, 8, "cpu", beam_size=4,
                         alpha=0.6, penalty="gnmt", **settings)
    assert [e["source"] for e in half.examples] == [" ".join(s) for s in SOURCES]
    assert [e["greedy"] for e in half.examples] == greedy
    assert [e["beam"] for e in half.examples] == beam
    assert ["attention" in e for e in half.examples] == [True] * 3 + [False] * 3
    for example, source in zip(half.examples[:3], SOURCES):
        weights = np.array(example["attention"])  # (layers, heads, output + <eos>, source)
        assert weights.shape == (2, 4, len(example["beam"]) + 1, min(len(source) + 1, 8))
        np.testing.assert_allclose(weights.sum(-1), 1, atol=1e-5)


def test_export_errors(net, vocabs):
    with pytest.raises(ValueError, match="precision must be one of"):
        book.export_translator(net, *vocabs, num_steps=8, precision="bfloat16")
    with pytest.raises(ValueError, match="num_steps must be a positive int"):
        book.export_translator(net, *vocabs, num_steps=0)
    with pytest.raises(TypeError, match="examples must be tokenised sentences"):
        book.export_translator(net, *vocabs, num_steps=8, examples=["go ."])
    with pytest.raises(TypeError, match="sep must be a str"):
        book.export_translator(net, *vocabs, num_steps=8, sep=None)
    with pytest.raises(ValueError, match="beam_size must be a positive int"):
        book.export_translator(net, *vocabs, num_steps=8, beam_size=0)


# ---------------------------------------------------------------------------------------------
# the panel
# ---------------------------------------------------------------------------------------------

def test_panel_html_carries_the_payloads_safely(half):
    bad = "<img src=x onerror=alert(1)></script>"
    panel = book.TranslatorPanel({"fra-eng": (half, bad)}, lang="zh", text=f"PDF {bad}")
    page = panel.to_html()
    assert page.startswith('<div class="d2l-translator" data-lang="zh">')
    assert "<img" not in page and page.count("</script>") == 2  # the two JSON scripts only
    model = page.split('data-name="fra-eng">', 1)[1].split("</script>", 1)[0]
    payload = json.loads(model)
    assert payload["heading"] == bad and payload["config"] == half.config
    assert payload["examples"] == [e["source"] for e in half.examples]
    bundle = panel._repr_mimebundle_()
    assert bundle["text/markdown"] == f"PDF {bad}" and bundle["text/html"] == page
    assert "&lt;img" in page  # the fallback text, escaped
    assert repr(panel) == "<TranslatorPanel: fra-eng>"


def test_panel_errors(half):
    with pytest.raises(ValueError, match="lang must be 'en' or 'zh'"):
        book.TranslatorPanel({"fra-eng": (half, "x")}, lang="fr", text="t")
    with pytest.raises(ValueError, match="text must be a non-empty str"):
        book.TranslatorPanel({"fra-eng": (half, "x")}, lang="en", text=" ")
    with pytest.raises(ValueError, match="models must name at least one"):
        book.TranslatorPanel({}, lang="en", text="t")
    with pytest.raises(TypeError, match="models must map names"):
        book.TranslatorPanel({"fra-eng": half}, lang="en", text="t")
    with pytest.raises(TypeError, match="models must map names"):
        book.TranslatorPanel({"<b>": (half, "x")}, lang="en", text="t")


def test_module_is_documented():
    assert export in book.MODULES
    assert {"round_weights", "export_translator", "TranslatorExport", "TranslatorPanel"} <= set(
        book.__all__)
