"""Tests of d2lmini.data: downloads (checksums, cache, mirror, offline), source resolution and its
announcement, preprocessing, vocabularies, batching, the translation loaders and text8.

No test uses the network: every connection to a host other than 127.0.0.1 fails the test, and
downloads are exercised against a local ``http.server``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import http.server
import io
import re
import socket
import threading
import zipfile
from pathlib import Path

import pytest
import torch

import d2lmini as d2l
from d2lmini import data, datahub, text8

FOUR_PAIRS = [("go .", "va !"), ("i lost .", "j'ai perdu ."), ("he's calm .", "il est calme ."),
              ("i'm home .", "je suis chez moi .")]


# ---------------------------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Fail any connection that is not to the local test server; no back-off sleeps."""
    real = socket.create_connection

    def guarded(address, *args, **kwargs):
        if address[0] not in ("127.0.0.1", "localhost"):
            raise AssertionError(f"test tried to reach the network: {address}")
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", guarded)
    monkeypatch.setattr(datahub.time, "sleep", lambda s: None)


@pytest.fixture
def no_data_dir(monkeypatch, tmp_cache):
    """Neither a local data directory nor anything in the (empty, temporary) cache."""
    monkeypatch.delenv("D2LMINI_DATA_DIR", raising=False)
    return tmp_cache


@pytest.fixture
def real_data(monkeypatch, shared_data_dir, tmp_cache):
    monkeypatch.setenv("D2LMINI_DATA_DIR", str(shared_data_dir))
    return shared_data_dir


def announcements(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("[d2lmini]")]


def make_zip(entries: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in entries.items():
            zf.writestr(name, text)
    return buf.getvalue()


SAMPLE_FRA = "Go.\tVa !\nI lost.\tJ'ai perdu.\nHe's calm.\tIl est calme.\n"


class Server:
    """A local HTTP server: ``files`` maps URL paths to bytes; ``fail_first`` requests get 503."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        self.fail_first = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # the name http.server expects
                server.requests.append(self.path)
                if server.fail_first > 0:
                    server.fail_first -= 1
                    self.send_error(503)
                    return
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def online(monkeypatch):
    monkeypatch.delenv("D2LMINI_OFFLINE", raising=False)
    monkeypatch.delenv("D2LMINI_MIRROR", raising=False)


@pytest.fixture
def served_fra(server, monkeypatch):
    """``fra-eng`` registered at the local server with its correct SHA-1."""
    body = make_zip({"fra-eng/fra.txt": SAMPLE_FRA, "fra-eng/_about.txt": "test"})
    server.files["/fra-eng.zip"] = body
    monkeypatch.setitem(datahub.DATA_HUB, "fra-eng", (server.url + "/fra-eng.zip",
                                                   hashlib.sha1(body).hexdigest()))
    return body


# ---------------------------------------------------------------------------------------------
# downloads
# ---------------------------------------------------------------------------------------------

def test_data_hub_registry():
    assert set(d2l.DATA_HUB) == {"fra-eng", "cmn-eng", "text8", "tinyshakespeare"}
    url, sha1 = d2l.DATA_HUB["fra-eng"]
    assert url == d2l.DATA_URL + "fra-eng.zip"
    assert sha1 == "94646ad1522d915e7b0f9296181140edcf86a4f5"
    for url, sha1 in d2l.DATA_HUB.values():
        assert url.startswith("http") and (sha1 is None or re.fullmatch(r"[0-9a-f]{40}", sha1))


def test_download_verifies_and_caches(server, served_fra, online, tmp_cache):
    path = d2l.download("fra-eng")
    assert path == tmp_cache / "fra-eng.zip" and path.read_bytes() == served_fra
    assert server.requests == ["/fra-eng.zip"]
    assert sorted(p.name for p in tmp_cache.iterdir()) == ["fra-eng.zip"]  # no temporary left
    # a cache hit does not download again
    assert d2l.download("fra-eng") == path and len(server.requests) == 1


def test_download_explicit_cache_dir(server, served_fra, online, tmp_path):
    path = d2l.download("fra-eng", cache_dir=tmp_path / "other")
    assert path.parent == tmp_path / "other" and path.is_file()


def test_download_wrong_checksum_leaves_nothing(server, served_fra, online, tmp_cache,
                                                monkeypatch):
    monkeypatch.setitem(datahub.DATA_HUB, "fra-eng", (server.url + "/fra-eng.zip", "0" * 40))
    with pytest.raises(d2l.ChecksumError, match="expected 0000"):
        d2l.download("fra-eng")
    assert list(tmp_cache.iterdir()) == []


def test_cached_file_with_wrong_checksum_is_fetched_again(server, served_fra, online, tmp_cache):
    (tmp_cache / "fra-eng.zip").write_bytes(b"corrupted")
    assert d2l.download("fra-eng").read_bytes() == served_fra
    assert len(server.requests) == 1


def test_download_retries_then_succeeds(server, served_fra, online, tmp_cache):
    server.fail_first = 2
    assert d2l.download("fra-eng", retries=3).read_bytes() == served_fra
    assert len(server.requests) == 3


def test_download_gives_up_after_retries(server, online, tmp_cache, monkeypatch):
    monkeypatch.setitem(datahub.DATA_HUB, "fra-eng", (server.url + "/missing.zip", None))
    with pytest.raises(OSError, match="after 2 attempt"):
        d2l.download("fra-eng", retries=2)
    assert len(server.requests) == 2 and list(tmp_cache.iterdir()) == []


def test_mirror_replaces_canonical_host(server, served_fra, online, tmp_cache, monkeypatch):
    sha1 = datahub.DATA_HUB["fra-eng"][1]
    monkeypatch.setitem(datahub.DATA_HUB, "fra-eng",
                        ("http://canonical.invalid/d/fra-eng.zip", sha1))
    server.files["/mirror/fra-eng.zip"] = served_fra
    monkeypatch.setenv("D2LMINI_MIRROR", server.url + "/mirror/")
    assert d2l.download("fra-eng").read_bytes() == served_fra
    assert server.requests == ["/mirror/fra-eng.zip"]


def test_offline_refuses_network(server, served_fra, tmp_cache):
    with pytest.raises(d2l.OfflineError) as info:
        d2l.download("fra-eng")
    message = str(info.value)
    for hint in ("D2LMINI_OFFLINE", "D2LMINI_DATA_DIR", "D2LMINI_MIRROR", "fra-eng/fra.txt"):
        assert hint in message
    assert str(tmp_cache) not in message  # no path of the machine
    assert server.requests == []


def test_offline_uses_cached_file(server, served_fra, tmp_cache):
    (tmp_cache / "fra-eng.zip").write_bytes(served_fra)
    assert d2l.download("fra-eng").read_bytes() == served_fra and server.requests == []


def test_download_extract(server, served_fra, online, tmp_cache):
    folder = d2l.download_extract("fra-eng")
    assert folder == tmp_cache / "fra-eng"
    assert (folder / "fra-eng" / "fra.txt").read_text(encoding="utf-8") == SAMPLE_FRA
    assert d2l.download_extract("fra-eng", "fra-eng") == folder / "fra-eng"
    assert not [p for p in tmp_cache.iterdir() if p.name.endswith(".part")]


def test_unknown_dataset_names_known_ones():
    with pytest.raises(ValueError, match="fra-eng"):
        d2l.download("ptb")
    with pytest.raises(TypeError, match="name must be a str"):
        d2l.resolve(3)
    with pytest.raises(ValueError, match="retries"):
        d2l.download("fra-eng", retries=0)
    with pytest.raises(TypeError, match="retries"):
        d2l.download("fra-eng", retries=1.5)
    with pytest.raises(ValueError, match="timeout"):
        d2l.download("fra-eng", timeout=0)


def test_checksum_error_is_not_an_os_error():
    # an OSError would look like a failed download and be hidden by the offline fallback
    assert not issubclass(d2l.ChecksumError, OSError)


# ---------------------------------------------------------------------------------------------
# source resolution and the announcement line
# ---------------------------------------------------------------------------------------------

def test_read_data_nmt_from_local_data_dir(real_data, capsys):
    text, source = d2l.read_data_nmt(return_source=True)
    assert text.startswith("Go.\tVa !")
    out = capsys.readouterr().out
    assert announcements(out) == [
        "[d2lmini] fra-eng: local data directory (the copy the published book uses)"]
    assert str(real_data) not in out and source.kind == "local"
    assert source.path == real_data / "fra-eng" / "fra.txt"
    assert d2l.read_data_nmt() == text  # without return_source: the text alone


def test_local_copy_that_differs_from_the_published_one_says_so(tmp_path, monkeypatch, tmp_cache,
                                                                capsys):
    (tmp_path / "fra-eng").mkdir()
    (tmp_path / "fra-eng" / "fra.txt").write_text(SAMPLE_FRA, encoding="utf-8")
    monkeypatch.setenv("D2LMINI_DATA_DIR", str(tmp_path))
    assert d2l.read_data_nmt() == SAMPLE_FRA
    (line,) = announcements(capsys.readouterr().out)
    assert line == ("[d2lmini] fra-eng: local data directory (not the copy the published book "
                    "uses: its numbers may differ)")


def test_data_source_record():
    source = d2l.DataSource("fra-eng", "cache", "note", Path("/some/where/fra.txt"))
    assert str(source) == "fra-eng: download cache (note)"
    assert "/some/where" not in repr(source) and "/some/where" not in str(source)
    assert d2l.DataSource("text8", "local").description == "local data directory"


def test_read_data_from_cache(no_data_dir, capsys):
    target = no_data_dir / "fra-eng" / "fra-eng" / "fra.txt"
    target.parent.mkdir(parents=True)
    target.write_text(SAMPLE_FRA, encoding="utf-8")
    assert d2l.read_data_nmt() == SAMPLE_FRA
    out = capsys.readouterr().out
    assert announcements(out) == ["[d2lmini] fra-eng: download cache (not the copy the published "
                                  "book uses: its numbers may differ)"]
    assert str(no_data_dir) not in out


def test_read_data_downloads_then_uses_cache(server, served_fra, online, no_data_dir, capsys):
    assert d2l.read_data_nmt() == SAMPLE_FRA
    (line,) = announcements(capsys.readouterr().out)
    assert line == ("[d2lmini] fra-eng: downloaded into the download cache "
                    f"(from {server.url}/fra-eng.zip)")
    assert d2l.read_data_nmt() == SAMPLE_FRA
    (line,) = announcements(capsys.readouterr().out)
    assert line.startswith("[d2lmini] fra-eng: download cache ") and len(server.requests) == 1


def test_failed_download_falls_back(server, online, no_data_dir, monkeypatch, capsys):
    monkeypatch.setitem(datahub.DATA_HUB, "fra-eng", (server.url + "/missing.zip", None))
    text = d2l.read_data_nmt()
    (line,) = announcements(capsys.readouterr().out)
    assert f"offline corpus shipped with d2lmini {d2l.__version__}" in line
    assert "download failed" in line
    assert "Go.\tVa !" in text


def test_bad_checksum_is_not_hidden_by_fallback(server, served_fra, online, no_data_dir,
                                                monkeypatch):
    monkeypatch.setitem(datahub.DATA_HUB, "fra-eng", (server.url + "/fra-eng.zip", "f" * 40))
    with pytest.raises(d2l.ChecksumError):
        d2l.read_data_nmt()


def test_offline_fallback_fra(no_data_dir, capsys):
    text, source_record = d2l.read_data_nmt(return_source=True)
    (line,) = announcements(capsys.readouterr().out)
    assert line.startswith(f"[d2lmini] fra-eng: offline corpus shipped with d2lmini "
                           f"{d2l.__version__} (304 written and ")
    assert "generated pairs, not Tatoeba's" in line and "D2LMINI_OFFLINE=1" in line
    assert str(no_data_dir) not in line and source_record.kind == "offline"
    source, target = d2l.tokenize_nmt(d2l.preprocess_nmt(text))
    assert len(source) > 304 + 0.99 * d2l.OFFLINE_GENERATED_PAIRS
    pairs = {(" ".join(s), " ".join(t)) for s, t in zip(source, target)}
    assert set(FOUR_PAIRS) <= pairs
    assert len({" ".join(s) for s in source}) == len(source)  # one translation per sentence
    # shortest first, as fra.txt; the four test sentences are among the first 600 pairs
    lengths = [len(line.split("\t")[0]) for line in text.strip().split("\n")]
    assert lengths == sorted(lengths)
    first = {(" ".join(s), " ".join(t)) for s, t in zip(source[:600], target[:600])}
    assert set(FOUR_PAIRS) <= first


def test_offline_fallback_cmn(no_data_dir, capsys):
    text = d2l.read_data_cmn()
    (line,) = announcements(capsys.readouterr().out)
    assert line.startswith("[d2lmini] cmn-eng: offline corpus shipped with d2lmini")
    source, target = d2l.tokenize_cmn(d2l.preprocess_cmn(text))
    assert len(source) > 299 + 0.99 * d2l.OFFLINE_GENERATED_PAIRS
    pairs = {(" ".join(s), "".join(t)) for s, t in zip(source, target)}
    assert ("i like tea .", "我喜欢茶。") in pairs and ("help me .", "帮帮我。") in pairs
    assert all(len(row.split("\t")) == 3 for row in text.strip().split("\n"))


#: sha256 of each offline corpus as read_data_nmt/read_data_cmn return it (the written pairs
#: and the 30,000 generated ones, shortest first). The numbers of the book's offline runs depend
#: on every byte: a change to the grammar (tools/corpus/), its tables or the written
#: pairs that alters the corpus must be deliberate (tools/corpus/write_offline_corpus.py writes the
#: shipped files again), and update these with the reason.
OFFLINE_CORPUS_SHA256 = {
    "fra-eng": "f04a61f1866b613956fcfb749d0bcb1d4077cc1526ffc3aa4ebfb6e69d4763b0",
    "cmn-eng": "13d8f5e2b81a454e3773112edf3f8cdc6ddc37e56073a141f664e65652d7dea3",
}


@pytest.mark.parametrize("name", sorted(OFFLINE_CORPUS_SHA256))
def test_offline_corpus_is_pinned(name):
    text, num_written, num_generated = data._shipped_corpus(name)
    assert num_written == {"fra-eng": 304, "cmn-eng": 299}[name]
    assert num_generated == d2l.OFFLINE_GENERATED_PAIRS  # none dropped: the generator never
    # returns a written English sentence, so nothing is filtered
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == OFFLINE_CORPUS_SHA256[name]


# ---------------------------------------------------------------------------------------------
# preprocessing and tokenisation
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    ("Go.\tVa\u202f!", "go .\tva !"),
    ("Hello, World!", "hello , world !"),
    ("Who?\tQui\xa0?", "who ?\tqui ?"),
    ("already spaced .", "already spaced ."),
    (".start", ".start"),            # nothing before the first character
    ("A.B", "a .b"),                 # d2l inserts only before punctuation
    ("Wait...", "wait . . ."),
])
def test_preprocess_nmt(raw, expected):
    assert d2l.preprocess_nmt(raw) == expected


def test_tokenize_nmt():
    text = "go .\tva !\nno tab here\ni lost .\tj'ai perdu .\textra column\n\nhi .\tsalut ."
    source, target = d2l.tokenize_nmt(text)
    assert source == [["go", "."], ["i", "lost", "."], ["hi", "."]]
    assert target == [["va", "!"], ["j'ai", "perdu", "."], ["salut", "."]]
    assert d2l.tokenize_nmt(text, num_examples=2)[0] == source[:2]  # exactly num_examples
    with pytest.raises(ValueError, match="num_examples"):
        d2l.tokenize_nmt(text, num_examples=0)


def test_preprocess_and_tokenize_cmn():
    raw = "Hi.\t嗨 。\tCC-BY 2.0 (France) Attribution\nI'm Tom!\t我是 汤姆！\tx\nno tab"
    text = d2l.preprocess_cmn(raw)
    assert text == "hi .\t嗨。\ni'm tom !\t我是汤姆！"
    source, target = d2l.tokenize_cmn(text)
    assert source == [["hi", "."], ["i'm", "tom", "!"]]
    assert target == [["嗨", "。"], ["我", "是", "汤", "姆", "！"]]
    assert d2l.tokenize_cmn(text, num_examples=1) == ([["hi", "."]], [["嗨", "。"]])


def test_text_must_be_str():
    for fn in (d2l.preprocess_nmt, d2l.tokenize_nmt, d2l.preprocess_cmn, d2l.tokenize_cmn):
        with pytest.raises(TypeError, match="text must be a str"):
            fn(["not", "a", "str"])


# ---------------------------------------------------------------------------------------------
# Vocab
# ---------------------------------------------------------------------------------------------

def test_vocab_order_reserved_unk():
    tokens = [["b", "a", "c", "a"], ["b", "d", "a"]]
    vocab = d2l.Vocab(tokens, reserved_tokens=["<pad>", "<bos>"])
    assert vocab.idx_to_token == ["<unk>", "<pad>", "<bos>", "a", "b", "c", "d"]
    assert vocab.token_freqs == [("a", 3), ("b", 2), ("c", 1), ("d", 1)]  # ties alphabetical
    assert vocab.unk == 0 and vocab["never seen"] == 0 and vocab["<pad>"] == 1
    assert len(vocab) == 7 and "a" in vocab and "z" not in vocab
    # the same counts in another order give the same indices
    assert d2l.Vocab([["d", "a", "b"], ["a", "c", "b", "a"]],
                     reserved_tokens=["<pad>", "<bos>"]).idx_to_token == vocab.idx_to_token


def test_vocab_min_freq_and_lookup_roundtrip():
    vocab = d2l.Vocab("the cat saw the dog and the cat ran".split(), min_freq=2)
    assert vocab.idx_to_token == ["<unk>", "the", "cat"]
    line = ["the", "cat", "ran"]
    assert vocab[line] == [1, 2, 0]
    assert vocab.to_tokens(vocab[line]) == ["the", "cat", "<unk>"]
    assert vocab[[line, ("cat",)]] == [[1, 2, 0], [2]]  # nested lists and tuples
    assert vocab.to_tokens(torch.tensor([[1, 2]])) == [["the", "cat"]]
    assert vocab.to_tokens(2) == "cat"
    with pytest.raises(ValueError, match="index"):
        vocab.to_tokens(3)
    with pytest.raises(ValueError, match="min_freq"):
        d2l.Vocab(["a"], min_freq=-1)
    with pytest.raises(TypeError, match="min_freq"):
        d2l.Vocab(["a"], min_freq=1.5)
    assert len(d2l.Vocab()) == 1  # just <unk>


def test_vocab_refuses_a_string():
    # a str would silently become a vocabulary of its characters
    with pytest.raises(TypeError, match="not a str"):
        d2l.Vocab("hello")
    with pytest.raises(TypeError, match="reserved_tokens"):
        d2l.Vocab(["a"], reserved_tokens="<pad>")
    assert d2l.Vocab(list("hello")).idx_to_token == ["<unk>", "l", "e", "h", "o"]


def test_vocab_reserved_token_not_duplicated():
    vocab = d2l.Vocab(["<pad>", "x", "x"], reserved_tokens=["<pad>"])
    assert vocab.idx_to_token == ["<unk>", "<pad>", "x"]


# ---------------------------------------------------------------------------------------------
# padding, arrays, batches, splits
# ---------------------------------------------------------------------------------------------

def test_truncate_pad():
    assert d2l.truncate_pad([1, 2, 3], 5, 0) == [1, 2, 3, 0, 0]
    assert d2l.truncate_pad([1, 2, 3], 2, 0) == [1, 2]
    assert d2l.truncate_pad([], 2, 9) == [9, 9]
    for bad in (0, -1):
        with pytest.raises(ValueError, match="num_steps must be a positive int"):
            d2l.truncate_pad([1], bad, 0)
    for bad in (2.5, True, "3"):
        with pytest.raises(TypeError, match="num_steps must be a positive int"):
            d2l.truncate_pad([1], bad, 0)


def test_build_array_nmt():
    vocab = d2l.Vocab([["a", "b", "c"]], reserved_tokens=["<pad>", "<bos>", "<eos>"])
    pad, eos = vocab["<pad>"], vocab["<eos>"]
    array, valid_len = d2l.build_array_nmt([["a"], ["a", "b", "c", "z"]], vocab, 4)
    assert array.dtype == torch.int64 and valid_len.dtype == torch.int64
    assert array.tolist() == [[vocab["a"], eos, pad, pad],
                              [vocab["a"], vocab["b"], vocab["c"], 0]]  # truncated: no <eos>
    assert valid_len.tolist() == [2, 4]
    empty, empty_len = d2l.build_array_nmt([], vocab, 3)
    assert empty.shape == (0, 3) and empty_len.shape == (0,)
    with pytest.raises(ValueError, match="<eos>"):
        d2l.build_array_nmt([["a"]], d2l.Vocab(["a"], reserved_tokens=["<pad>"]), 3)


def test_load_array():
    X, y = torch.arange(20).reshape(10, 2), torch.arange(10)
    batches = list(d2l.load_array((X, y), 4, is_train=False))
    assert [len(b[1]) for b in batches] == [4, 4, 2] and batches[0][1].tolist() == [0, 1, 2, 3]

    def order(seed):
        return torch.cat([b[1] for b in d2l.load_array((X, y), 3, seed=seed)]).tolist()

    assert order(1) == order(1) and sorted(order(1)) == list(range(10))
    assert order(1) != order(2)
    with pytest.raises(ValueError, match="batch_size"):
        d2l.load_array((X, y), 0)
    with pytest.raises(ValueError, match="first dimension"):
        d2l.load_array((X, y[:5]), 2)


def test_split_nmt():
    source, target = [[str(i)] for i in range(50)], [[f"t{i}"] for i in range(50)]
    train_s, train_t, test_s, test_t = d2l.split_nmt(source, target, 0.2, seed=3)
    assert len(test_s) == 10 and len(train_s) == 40
    assert sorted(train_s + test_s, key=lambda t: int(t[0])) == source
    assert all(t[0] == "t" + s[0] for s, t in zip(train_s + test_s, train_t + test_t))
    assert d2l.split_nmt(source, target, 0.2, seed=3)[2] == test_s
    assert d2l.split_nmt(source, target, 0.2, seed=4)[2] != test_s
    with pytest.raises(ValueError, match="test_fraction"):
        d2l.split_nmt(source, target, 1.0)
    with pytest.raises(ValueError, match="same length"):
        d2l.split_nmt(source, target[:3])


# ---------------------------------------------------------------------------------------------
# the loaders
# ---------------------------------------------------------------------------------------------

def check_batches(train_iter, src_vocab, tgt_vocab, batch_size, num_steps, n):
    batches = list(train_iter)
    assert sum(len(b[0]) for b in batches) == n
    X, X_valid_len, Y, Y_valid_len = batches[0]
    assert X.shape == Y.shape == (batch_size, num_steps) and X.dtype == Y.dtype == torch.int64
    assert X_valid_len.shape == Y_valid_len.shape == (batch_size,)
    assert X_valid_len.min() >= 1 and X_valid_len.max() <= num_steps
    for vocab in (src_vocab, tgt_vocab):
        assert vocab.idx_to_token[:4] == ["<unk>", "<pad>", "<bos>", "<eos>"]
    # padding starts exactly at the valid length
    mask = torch.arange(num_steps)[None, :] < X_valid_len[:, None]
    assert torch.equal(X == src_vocab["<pad>"], ~mask)


def test_load_data_nmt_real_data(real_data, capsys):
    train_iter, src_vocab, tgt_vocab = d2l.load_data_nmt(64, 10, 600)
    assert announcements(capsys.readouterr().out) == [
        "[d2lmini] fra-eng: local data directory (the copy the published book uses)"]
    check_batches(train_iter, src_vocab, tgt_vocab, 64, 10, 600)
    for eng, fra in FOUR_PAIRS:
        assert 0 not in src_vocab[eng.split()] and 0 not in tgt_vocab[fra.split()]


def test_load_data_nmt_fallback_is_trainable_vocabulary(no_data_dir, capsys):
    train_iter, src_vocab, tgt_vocab, source = d2l.load_data_nmt(64, 10, 600, return_source=True)
    (line,) = announcements(capsys.readouterr().out)
    assert "offline corpus" in line and source.kind == "offline"
    check_batches(train_iter, src_vocab, tgt_vocab, 64, 10, 600)
    for eng, fra in FOUR_PAIRS:  # every word of the four test sentences is known (min_freq 2)
        assert 0 not in src_vocab[eng.split()] and 0 not in tgt_vocab[fra.split()]


def test_load_data_nmt_is_repeatable(real_data):
    def first():
        return next(iter(d2l.load_data_nmt(8, 6, 100)[0]))[0]

    d2l.set_seed(0)
    a = first()
    d2l.set_seed(0)
    assert torch.equal(a, first())


def test_load_data_cmn_real_data(real_data, capsys):
    train_iter, src_vocab, tgt_vocab = d2l.load_data_cmn(32, 12, 500)
    assert announcements(capsys.readouterr().out) == [
        "[d2lmini] cmn-eng: local data directory (the copy the published book uses)"]
    check_batches(train_iter, src_vocab, tgt_vocab, 32, 12, 500)
    assert all(len(t) == 1 for t in tgt_vocab.idx_to_token[4:])  # one character per token
    assert "。" in tgt_vocab and "？" in tgt_vocab


def test_load_data_cmn_fallback(no_data_dir, capsys):
    _, _, tgt_vocab = d2l.load_data_cmn(16, 10)
    assert "offline corpus" in announcements(capsys.readouterr().out)[0]
    assert all(len(t) == 1 for t in tgt_vocab.idx_to_token[4:])
    assert 0 not in tgt_vocab[list("我喜欢茶。")]


@pytest.mark.parametrize("loader", [d2l.load_data_nmt, d2l.load_data_cmn])
@pytest.mark.parametrize("args, name", [((0, 10), "batch_size"), ((8, 0), "num_steps"),
                                        ((8, 10, -5), "num_examples"),
                                        ((8.0, 10), "batch_size"), ((8, "10"), "num_steps")])
def test_loaders_reject_bad_arguments(loader, args, name, capsys):
    with pytest.raises((TypeError, ValueError), match=f"{name} must be a positive int"):
        loader(*args)
    assert capsys.readouterr().out == ""  # validated before any data is read


# ---------------------------------------------------------------------------------------------
# text8
# ---------------------------------------------------------------------------------------------

def test_text8_from_data_dir(tmp_path, monkeypatch, tmp_cache, capsys):
    words = [f"w{i % 7}" for i in range(25_003)]
    (tmp_path / "text8").mkdir()
    (tmp_path / "text8" / "text8").write_text(" " + " ".join(words), encoding="ascii")
    monkeypatch.setenv("D2LMINI_DATA_DIR", str(tmp_path))
    sentences = d2l.load_text8()
    assert [len(s) for s in sentences] == [10_000, 10_000, 5_003]
    assert [w for s in sentences for w in s] == words
    out = capsys.readouterr().out
    assert announcements(out) == ["[d2lmini] text8: local data directory"]
    assert str(tmp_path) not in out
    assert [len(s) for s in d2l.load_text8(max_words=12_345)] == [10_000, 2_345]


def test_text8_gensim_fallback(no_data_dir, capsys):
    sentences, source = d2l.load_text8(max_words=30_000, return_source=True)
    (line,) = announcements(capsys.readouterr().out)
    assert line.startswith("[d2lmini] text8: offline corpus shipped with d2lmini")
    assert "Wikipedia sample in gensim, 30,000 words used" in line and source.kind == "offline"
    assert str(no_data_dir) not in line
    assert [len(s) for s in sentences] == [10_000, 10_000, 10_000]
    words = [w for s in sentences for w in s]
    assert all(re.fullmatch(r"[a-z]+", w) for w in words)
    assert {"the", "of", "and"} <= set(words)
    assert (no_data_dir / "text8-gensim-sample" / "text8").is_file()  # built once, cached
    assert d2l.load_text8(max_words=100)[0] == words[:100]


def test_text8_cleaning_spells_digits():
    assert text8._text8_clean("In 1984, Orwell's <b>novel</b>!") == (
        "in one nine eight four orwell s b novel b")


def test_text8_rejects_bad_max_words():
    with pytest.raises(ValueError, match="max_words"):
        d2l.load_text8(max_words=0)


@pytest.mark.parametrize("module", [datahub, data, text8])
def test_all_exported(module):
    for name in module.__all__:
        if name in d2l._IN_THEIR_MODULE:  # a data table: d2l.datahub.PUBLISHED_SHA256
            assert not hasattr(d2l, name)
        else:
            assert getattr(d2l, name) is getattr(module, name)


def test_get_cache_dir_order(tmp_path, monkeypatch):
    monkeypatch.delenv("D2LMINI_CACHE_DIR", raising=False)
    assert d2l.get_cache_dir() == Path.home() / ".cache" / "d2lmini"
    monkeypatch.setenv("D2LMINI_CACHE_DIR", str(tmp_path / "env"))
    assert d2l.get_cache_dir() == tmp_path / "env"
    assert d2l.get_cache_dir(tmp_path / "arg") == tmp_path / "arg"  # an argument wins
    assert not (tmp_path / "env").exists()  # nothing is created


def test_dataset_files_name_the_layout_of_the_data_dir():
    assert d2l.datahub.DATASET_FILES["fra-eng"] == "fra-eng/fra.txt"
    assert set(d2l.datahub.DATASET_FILES) <= set(d2l.DATA_HUB)


def test_split_held_out_keeps_every_translation_of_a_held_out_sentence_out_of_training():
    source = [["a"], ["a"], ["b"], ["c"], ["c"], ["c"], ["d"], ["e"], ["f"], ["g"]]
    target = [["x1"], ["x2"], ["y"], ["z1"], ["z2"], ["z3"], ["u"], ["v"], ["w"], ["q"]]
    tr_s, tr_t, te_s, te_refs = d2l.split_held_out(source, target, 0.3, seed=1)
    assert len(te_s) == round(0.3 * 7) and len(te_refs) == len(te_s)
    held = {tuple(s) for s in te_s}
    assert not held & {tuple(s) for s in tr_s}
    pairs = dict()
    for s, t in zip(source, target):
        pairs.setdefault(tuple(s), []).append(t)
    for s, refs in zip(te_s, te_refs):
        assert refs == pairs[tuple(s)]  # all translations, in corpus order
    assert len(tr_s) + sum(len(r) for r in te_refs) == len(source)
    assert d2l.split_held_out(source, target, 0.3, seed=1) == (tr_s, tr_t, te_s, te_refs)
    assert d2l.split_held_out(source, target, 0.3, seed=2)[2] != te_s


@pytest.mark.parametrize("fraction, error", [(0, ValueError), (1, ValueError), (True, TypeError),
                                             ("0.1", TypeError)])
def test_split_held_out_rejects_bad_fractions(fraction, error):
    with pytest.raises(error, match="test_fraction"):
        d2l.split_held_out([["a"], ["b"]], [["x"], ["y"]], fraction)


def test_normalise_source_expands_contractions_and_drops_final_punctuation():
    assert d2l.normalise_source("i'm fine .".split()) == ("i", "am", "fine")
    assert d2l.normalise_source("i am fine !".split()) == ("i", "am", "fine")
    assert d2l.normalise_source("he's calm".split()) == ("he", "is", "calm")
    assert d2l.normalise_source("i can't , won't swim ?!".split()) == (
        "i", "can", "not", ",", "will", "not", "swim", "?!")
    assert d2l.normalise_source("we don't know . .".split()) == ("we", "do", "not", "know")
    assert d2l.normalise_source("let's go !".split()) == ("let", "us", "go")
    assert d2l.normalise_source(["."]) == ()
    assert d2l.normalise_source(["'s"]) == ("'s",)  # an ending alone is not a contraction
    with pytest.raises(TypeError, match="tokens"):
        d2l.normalise_source("i'm fine .")


def _paraphrase_pairs():
    source = [s.split() for s in ["i'm fine .", "i am fine !", "go .", "go .", "run !",
                                  "he's calm .", "he is calm .", "stop !", "wait .", "hi .",
                                  "hello .", "help !"]]
    target = [t.split() for t in ["ça va .", "je vais bien .", "va !", "bouge !", "cours !",
                                  "il est calme .", "il est calme .", "arrête !",
                                  "attends .", "salut .", "salut .", "à l'aide !"]]
    return source, target


def test_split_held_out_by_normalised_source_keeps_variants_on_one_side():
    source, target = _paraphrase_pairs()
    for seed in range(8):
        split = d2l.split_held_out(source, target, 0.3, seed=seed, dev_fraction=0.3,
                                   normalise=True)
        assert isinstance(split, d2l.HeldOutSplit)
        train_keys = {d2l.normalise_source(s) for s in split.train_source}
        held = split.dev_source + split.test_source
        assert not train_keys & {d2l.normalise_source(s) for s in held}
        assert not ({d2l.normalise_source(s) for s in split.dev_source}
                    & {d2l.normalise_source(s) for s in split.test_source})
        assert len(split.test_source) == round(0.3 * 9) and len(split.dev_source) == 3
        held_lines = sum(map(len, split.dev_references + split.test_references))
        lines = len(split.train_source) + held_lines
        assert lines == len(source)  # nothing dropped: every line is on exactly one side
        for s, refs in zip(split.test_source, split.test_references):
            if d2l.normalise_source(s) == ("i", "am", "fine"):  # the group's references
                assert refs == [["ça", "va", "."], ["je", "vais", "bien", "."]]


def test_split_held_out_drops_held_out_sentences_whose_reference_is_a_training_target():
    source, target = _paraphrase_pairs()
    dropped_somewhere = False
    for seed in range(8):
        kept = d2l.split_held_out(source, target, 0.3, seed=seed, dev_fraction=0.3,
                                  drop_seen_targets=True)
        full = d2l.split_held_out(source, target, 0.3, seed=seed, dev_fraction=0.3)
        seen = {tuple(t) for t in kept.train_target}
        for refs in kept.dev_references + kept.test_references:
            assert not any(tuple(r) in seen for r in refs)
        assert len(kept.test_source) + kept.test_dropped == len(full.test_source)
        assert len(kept.dev_source) + kept.dev_dropped == len(full.dev_source)
        assert full.dev_dropped == full.test_dropped == 0
        dropped_somewhere |= kept.dev_dropped + kept.test_dropped > 0
    assert dropped_somewhere  # "salut ." and "il est calme ." are shared by two sources


def test_split_held_out_without_options_is_the_original_split():
    source, target = _paraphrase_pairs()
    old = d2l.split_held_out(source, target, 0.3, seed=3)
    assert isinstance(old, tuple) and not isinstance(old, d2l.HeldOutSplit) and len(old) == 4
    new = d2l.split_held_out(source, target, 0.3, seed=3, dev_fraction=0.0)
    assert (new.train_source, new.train_target, new.test_source, new.test_references) == old
    assert new.dev_source == [] and new.dev_references == []


@pytest.mark.parametrize("fraction, error", [(-0.1, ValueError), (1, ValueError),
                                             (True, TypeError), ("0.1", TypeError)])
def test_split_held_out_rejects_bad_dev_fractions(fraction, error):
    with pytest.raises(error, match="dev_fraction"):
        d2l.split_held_out([["a"], ["b"]], [["x"], ["y"]], 0.5, dev_fraction=fraction)


def test_bucket_sampler_respects_the_token_budget_and_covers_every_pair():
    g = torch.Generator().manual_seed(0)
    src = torch.randint(2, 20, (500,), generator=g)
    tgt = torch.randint(2, 20, (500,), generator=g)
    sampler = d2l.BucketSampler(src, tgt, max_tokens=64, seed=0)
    first = list(sampler)
    assert sorted(i for b in first for i in b) == list(range(500))
    for batch in first:
        longest = int(torch.maximum(src[batch], tgt[batch]).max())
        assert len(batch) * longest <= 64
    # similar lengths together: far less padding than random batches of the same sizes
    pad = sum(len(b) * int(tgt[b].max()) - int(tgt[b].sum()) for b in first)
    perm = torch.randperm(500, generator=g).tolist()
    random_batches, k = [], 0
    for b in first:
        random_batches.append(perm[k:k + len(b)])
        k += len(b)
    pad_random = sum(len(b) * int(tgt[b].max()) - int(tgt[b].sum()) for b in random_batches)
    assert pad < pad_random / 3
    assert list(sampler) == first  # looking at the batches does not move to the next epoch
    sampler.set_epoch(1)
    second = list(sampler)
    assert second != first  # a new order every epoch
    again = d2l.BucketSampler(src, tgt, max_tokens=64, seed=0)
    assert list(again) == first  # repeatable from the seed
    again.set_epoch(1)
    assert list(again) == second


def test_bucket_sampler_checks_its_arguments():
    with pytest.raises(ValueError, match="smaller than the longest"):
        d2l.BucketSampler([3, 30], [3, 4], max_tokens=10)
    with pytest.raises(ValueError, match="same length"):
        d2l.BucketSampler([3, 3], [3], max_tokens=10)
    with pytest.raises(TypeError, match="max_tokens"):
        d2l.BucketSampler([3], [3], max_tokens=10.0)


# ---------------------------------------------------------------------------------------------
# the registry: name -> (file, checksums, offline builder), completed by resolve
# ---------------------------------------------------------------------------------------------

def test_registry_is_the_one_source_of_the_tables():
    assert list(d2l.DATASETS) == ["fra-eng", "cmn-eng", "text8", "tinyshakespeare"]
    for name, ds in d2l.DATASETS.items():
        assert ds.name == name
        assert d2l.DATA_HUB[name] == (ds.url, ds.sha1)
        assert d2l.datahub.DATASET_FILES[name] == ds.file
        assert d2l.datahub.PUBLISHED_SHA256.get(name) == ds.published_sha256
        module, function = ds.offline.split(":")
        assert callable(getattr(importlib.import_module(module), function)), ds.offline


@pytest.mark.parametrize("name, written", [("fra-eng", 304), ("cmn-eng", 299)])
def test_offline_corpus_of_the_translation_pairs(name, written):
    corpus = d2l.offline_corpus(name)
    assert corpus.path is None and corpus.text == data._shipped_corpus(name)[0]
    assert corpus.detail == (f"{written} written and {d2l.OFFLINE_GENERATED_PAIRS:,} generated "
                             "pairs, not Tatoeba's")


def test_resolve_completes_with_the_offline_corpus(no_data_dir, monkeypatch):
    monkeypatch.setenv("D2LMINI_OFFLINE", "1")
    source = d2l.resolve("cmn-eng")
    assert source.kind == "offline" and source.path is None
    assert source.read_text() == d2l.offline_corpus("cmn-eng").text
    assert str(source).endswith("not Tatoeba's; used because: no local data directory, not in "
                                "the download cache, D2LMINI_OFFLINE=1)")
    bare = d2l.resolve("cmn-eng", offline=False)  # where it is, without building anything
    assert bare.text is None and bare.path is None and bare.because == source.because
    with pytest.raises(ValueError, match="neither a file nor a text"):
        bare.read_text()


def test_read_text_of_a_file(tmp_path):
    (tmp_path / "fra.txt").write_text("Go.\tVa !\n", encoding="utf-8")
    assert d2l.DataSource("fra-eng", "local", path=tmp_path / "fra.txt").read_text() == (
        "Go.\tVa !\n")


def test_offline_corpus_errors(monkeypatch):
    with pytest.raises(ValueError, match="unknown data set 'wmt14'"):
        d2l.offline_corpus("wmt14")
    with pytest.raises(TypeError, match="name must be a str"):
        d2l.offline_corpus(3)
    broken = dataclasses.replace(d2l.DATASETS["fra-eng"], offline="d2lmini.datahub:get_cache_dir")
    monkeypatch.setitem(d2l.DATASETS, "fra-eng", broken)
    with pytest.raises(TypeError, match="must return an OfflineCorpus"):
        d2l.offline_corpus("fra-eng")


# ---------------------------------------------------------------------------------------------
# Tiny Shakespeare (a plain file, not an archive) and d2lmini.chartext
# ---------------------------------------------------------------------------------------------

SAMPLE_SHAKESPEARE = "First Citizen:\nBefore we proceed any further, hear me speak.\n"


@pytest.fixture
def served_text(monkeypatch):
    server = Server()
    server.files["/input.txt"] = SAMPLE_SHAKESPEARE.encode()
    monkeypatch.setitem(datahub.DATA_HUB, "tinyshakespeare", (
        server.url + "/input.txt", hashlib.sha1(SAMPLE_SHAKESPEARE.encode()).hexdigest()))
    monkeypatch.delenv("D2LMINI_OFFLINE", raising=False)
    monkeypatch.delenv("D2LMINI_MIRROR", raising=False)
    monkeypatch.delenv("D2LMINI_DATA_DIR", raising=False)
    yield server
    server.close()


def test_plain_file_is_downloaded_into_its_folder_and_found_there(served_text, tmp_cache):
    text, source = d2l.read_tinyshakespeare(return_source=True)
    assert text == SAMPLE_SHAKESPEARE and source.kind == "download"
    assert source.path == tmp_cache / "tinyshakespeare" / "input.txt"
    again = d2l.locate("tinyshakespeare")
    assert again.kind == "cache" and again.path == source.path
    assert served_text.requests == ["/input.txt"]  # found in the cache the second time
    assert d2l.read_tinyshakespeare() == SAMPLE_SHAKESPEARE
    assert served_text.requests == ["/input.txt"]


def test_plain_file_with_a_wrong_checksum_is_rejected(served_text, tmp_cache, monkeypatch):
    monkeypatch.setitem(datahub.DATA_HUB, "tinyshakespeare",
                        (served_text.url + "/input.txt", "0" * 40))
    with pytest.raises(d2l.ChecksumError):
        d2l.read_tinyshakespeare()
    assert not any((tmp_cache / "tinyshakespeare").glob("input.txt*"))


def test_offline_stand_in_is_the_projects_english(no_data_dir, monkeypatch, capsys):
    monkeypatch.setenv("D2LMINI_OFFLINE", "1")
    text, source = d2l.read_tinyshakespeare(return_source=True)
    line = announcements(capsys.readouterr().out)[0]
    assert line.startswith("[d2lmini] tinyshakespeare: offline corpus shipped with d2lmini")
    assert "English sentences of this project's offline corpus, not Shakespeare" in line
    assert source.kind == "offline" and len(text) > 500_000
    lines = text.splitlines()
    assert len(lines) == len(set(lines))  # each sentence once
    english = {pair.split("\t")[0] for pair in d2l.read_data_nmt().splitlines() if pair}
    assert set(lines) == english
    assert d2l.read_tinyshakespeare() == text  # the same order every time


def test_real_file_from_the_data_directory(real_data):
    text, source = d2l.read_tinyshakespeare(return_source=True)
    assert source.kind == "local" and len(text) == 1_115_394
    assert source.detail == "the copy the published book uses"


def test_char_corpus_vocabulary_split_and_round_trip():
    corpus = d2l.CharCorpus("abcabcabcd", val_fraction=0.2)
    assert corpus.chars == ["a", "b", "c", "d"] and corpus.vocab_size == 4
    assert corpus.train.tolist() == [0, 1, 2, 0, 1, 2, 0, 1]
    assert corpus.val.tolist() == [2, 3]
    assert corpus.decode(corpus.encode("dab")) == "dab"
    with pytest.raises(ValueError, match="not in the vocabulary: 'z'"):
        corpus.encode("az")
    with pytest.raises(ValueError, match="val_fraction"):
        d2l.CharCorpus("abc", val_fraction=1.0)


def test_random_windows_are_shifted_by_one():
    ids = torch.arange(100)
    X, Y = d2l.random_windows(ids, 8, 10, torch.Generator().manual_seed(0))
    assert X.shape == Y.shape == (8, 10)
    assert torch.equal(Y, X + 1) and int(Y.max()) <= 99
    with pytest.raises(ValueError, match="longer than seq_len"):
        d2l.random_windows(ids[:5], 2, 5)
