"""What a reader sees when a data set cannot be downloaded: one calm line on stdout (the page),
the error itself only in the log at DEBUG level, never a URL, a resolver message or a traceback.
"""

from __future__ import annotations

import logging
import re
import socket
import urllib.error

import pytest

import d2lmini as d2l
from d2lmini import datahub

RESOLVER_ERROR = "[Errno -2] Name or service not known"


@pytest.fixture
def unreachable(monkeypatch, tmp_cache):
    """Downloads allowed, no local data, an empty cache, and every host unresolvable."""
    monkeypatch.delenv("D2LMINI_OFFLINE", raising=False)
    monkeypatch.delenv("D2LMINI_DATA_DIR", raising=False)
    monkeypatch.delenv("D2LMINI_MIRROR", raising=False)

    def no_such_host(request, timeout=None):
        raise urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))

    monkeypatch.setattr(datahub.urllib.request, "urlopen", no_such_host)
    monkeypatch.setattr(datahub.time, "sleep", lambda s: None)
    return tmp_cache


@pytest.fixture
def debug_records():
    """The records of the ``d2lmini`` logger at every level, as a reader's handler sees them."""
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("d2lmini")
    handler, level = Collect(level=logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_failed_download_is_one_calm_line_on_stdout(unreachable, capsys):
    source = datahub.resolve("text8", offline=False)
    assert source.kind == "offline" and source.path is None and source.text is None
    assert source.because.endswith("download failed") and not source.detail
    for noise in ("http", "Errno", "Name or service", "Traceback", "mattmahoney"):
        assert noise not in source.because and noise not in str(source)
    assert capsys.readouterr().out == ""  # resolve announces nothing: the loader does


def test_failed_download_details_go_to_the_debug_log(unreachable, debug_records, capsys):
    datahub.resolve("text8", offline=False)
    debug = [r.getMessage() for r in debug_records if r.levelno == logging.DEBUG]
    assert any("download failed" in m and "Name or service not known" in m for m in debug), debug
    assert any("mattmahoney.net" in m for m in debug)  # the URL is there for whoever asks
    out = capsys.readouterr().out
    assert "Name or service" not in out and "http" not in out, out  # even at DEBUG level


def test_text8_substitute_announcement(unreachable, capsys):
    sentences, source = d2l.load_text8(max_words=20_000, return_source=True)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    (line,) = lines
    assert line.startswith("[d2lmini] text8: offline corpus shipped with d2lmini")
    assert "text8-style substitute, the Wikipedia sample in gensim, 20,000 words used" in line
    assert line.endswith("download failed)")
    for noise in ("http", "Errno", "Name or service", "Traceback"):
        assert noise not in line
    assert source.kind == "offline" and sum(len(s) for s in sentences) == 20_000


def test_stdout_handler_prints_info_never_debug(capsys):
    logger = logging.getLogger("d2lmini.data")
    root = logging.getLogger("d2lmini")
    level = root.level
    root.setLevel(logging.DEBUG)
    try:
        logger.debug("a detail for the log only")
        logger.info("an announcement")
    finally:
        root.setLevel(level)
    assert capsys.readouterr().out == "[d2lmini] an announcement\n"


def test_offline_flag_reason_is_calm(monkeypatch, tmp_cache):
    monkeypatch.delenv("D2LMINI_DATA_DIR", raising=False)
    monkeypatch.setenv("D2LMINI_OFFLINE", "1")
    source = datahub.resolve("text8", offline=False)
    assert source.kind == "offline"
    assert source.because == "no local data directory, not in the download cache, D2LMINI_OFFLINE=1"


def test_locate_finds_local_then_cache_and_never_downloads(tmp_path, monkeypatch, tmp_cache):
    monkeypatch.delenv("D2LMINI_OFFLINE", raising=False)  # even online, locate does not fetch

    def no_download(*args, **kwargs):
        raise AssertionError("locate tried to download")

    monkeypatch.setattr(datahub.urllib.request, "urlopen", no_download)
    monkeypatch.delenv("D2LMINI_DATA_DIR", raising=False)
    assert d2l.locate("text8") is None
    cached = tmp_cache / "text8" / "text8"
    cached.parent.mkdir()
    cached.write_text("one two", encoding="ascii")
    found = d2l.locate("text8")
    assert found is not None and found.kind == "cache" and found.path == cached
    (tmp_path / "data" / "text8").mkdir(parents=True)
    (tmp_path / "data" / "text8" / "text8").write_text("three", encoding="ascii")
    monkeypatch.setenv("D2LMINI_DATA_DIR", str(tmp_path / "data"))
    found = d2l.locate("text8")
    assert found.kind == "local" and str(found) == "text8: local data directory"


def test_locate_checks_its_name():
    with pytest.raises(ValueError, match="unknown data set"):
        d2l.locate("wmt14")
    with pytest.raises(TypeError, match="name must be a str"):
        d2l.locate(3)


def test_every_look_for_a_data_set_is_recorded_where_the_build_asks(tmp_path, monkeypatch,
                                                                     tmp_cache):
    """With D2LMINI_DATA_READ_LOG set (the book's kernels set it), locate, resolve and the
    offline corpus append the data set's name, so the build knows which data a chapter read;
    without it nothing is written."""
    log = tmp_path / "reads.log"
    monkeypatch.delenv("D2LMINI_DATA_DIR", raising=False)
    monkeypatch.delenv(datahub.DATA_READ_LOG_ENV, raising=False)
    d2l.locate("text8")
    assert not log.exists()
    monkeypatch.setenv(datahub.DATA_READ_LOG_ENV, str(log))
    d2l.locate("text8")
    d2l.resolve("fra-eng")  # offline: the corpus shipped with the package
    assert log.read_text(encoding="utf-8").split() == ["text8", "fra-eng", "fra-eng"]
    datahub.offline_corpus("cmn-eng")
    assert log.read_text(encoding="utf-8").split()[-1] == "cmn-eng"


# what may stay Latin in a Chinese announcement: names of the package, the data sets, the corpus
# and the environment variable, and the version number
_LATIN_IN_ZH = re.compile(r"d2lmini|text8|gensim|fra-eng|cmn-eng|tinyshakespeare|Tatoeba|"
                          r"D2LMINI_OFFLINE|\d[\d.,]*")


def _untranslated(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", _LATIN_IN_ZH.sub("", text))


def test_announcements_are_chinese_in_the_zh_edition(unreachable, monkeypatch, capsys):
    """The zh pages glue the source's description and print the loaders' line: both Chinese."""
    monkeypatch.setenv("D2LMINI_LANG", "zh")
    sentences, source = d2l.load_text8(max_words=20_000, return_source=True)
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert line.startswith("[d2lmini] text8：d2lmini ") and "随包附带的离线语料" in line, line
    assert line.endswith("原因：没有本地数据目录，下载缓存中没有，下载失败）"), line
    assert "20,000 个词" in line
    assert not _untranslated(line.removeprefix("[d2lmini] ")), line
    for name in ("fra-eng", "cmn-eng", "tinyshakespeare"):
        described = datahub.resolve(name).description
        assert "原因：" in described and not _untranslated(described), described
    # the English edition is unchanged, whatever the process's language
    assert source.describe("en").startswith("offline corpus shipped with d2lmini")
    with pytest.raises(ValueError, match="'en' or 'zh'"):
        source.describe("fr")


def test_published_copy_is_described_in_chinese(tmp_path, monkeypatch, tmp_cache):
    monkeypatch.setenv("D2LMINI_LANG", "zh")
    (tmp_path / "text8").mkdir()
    (tmp_path / "text8" / "text8").write_text("a b c")
    monkeypatch.setenv("D2LMINI_DATA_DIR", str(tmp_path))
    assert str(datahub.locate("text8")) == "text8：本地数据目录"
    source = datahub.DataSource("fra-eng", "local", "the copy the published book uses",
                                detail_zh="与正式发布的版本所用的副本相同")
    assert source.description == "本地数据目录（与正式发布的版本所用的副本相同）"
