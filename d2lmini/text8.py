"""text8, the corpus of word2vec: the first 10^8 bytes of English Wikipedia, cleaned to lowercase
letters and spaces. Found like every data set (:mod:`d2lmini.datahub`); offline, a text8-style
corpus is built from the small Wikipedia sample that gensim ships inside its wheel (gensim is an
optional dependency: ``pip install "d2lmini[chapters]"``; the book installs it).
"""

from __future__ import annotations

import bz2
import itertools
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .datahub import ChecksumError, DataSource, OfflineCorpus, get_cache_dir, log, resolve
from .utils import check_positive_int

__all__ = ["load_text8"]

_TEXT8_NUM_BYTES = 100_000_000
_SENTENCE_WORDS = 10_000  # as gensim's Text8Corpus
_GENSIM_WIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
_DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_NON_LETTERS = re.compile(r"[^a-z]+")


def _text8_clean(text: str) -> str:
    """text8's cleaning (Mahoney's wikifil.pl, after markup removal): lowercase, digits spelled
    out one by one, every other non-letter a space, spaces collapsed."""
    text = text.lower()
    for digit, word in enumerate(_DIGITS):
        text = text.replace(str(digit), f" {word} ")
    return _NON_LETTERS.sub(" ", text).strip()


def _gensim_sample_text() -> str:
    """The Wikipedia sample inside gensim, cleaned as text8 was: one line of words."""
    try:
        from gensim.corpora.wikicorpus import extract_pages, filter_wiki
        from gensim.test.utils import datapath
    except ImportError as e:
        raise ImportError(
            "text8 is not available (no local copy, nothing cached, no download) and its offline "
            "replacement needs gensim: pip install 'd2lmini[chapters]' (or pip install gensim)"
        ) from e
    pieces = []
    with bz2.open(datapath(_GENSIM_WIKI), "rb") as f:
        for _title, wikitext, _pageid in extract_pages(f, filter_namespaces=("0",)):
            if not wikitext or wikitext.lstrip().lower().startswith("#redirect"):
                continue
            cleaned = _text8_clean(filter_wiki(wikitext))
            if cleaned:
                pieces.append(cleaned)
    return " ".join(pieces)


def gensim_substitute() -> OfflineCorpus:
    """The offline stand-in of text8 (the registry's builder, :data:`d2lmini.DATASETS`): the
    text8-style corpus built from gensim's Wikipedia sample, once, and cached in the download
    cache when it is writable (then returned as its ``path``, else as its ``text``)."""
    detail = "a text8-style substitute, the Wikipedia sample in gensim"
    zh = {"detail_zh": "text8 风格的替代语料，取自 gensim 自带的维基百科样本"}
    target = get_cache_dir() / "text8-gensim-sample" / "text8"
    if target.is_file():
        return OfflineCorpus(detail, path=target, **zh)
    text = _gensim_sample_text()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)
        os.replace(tmp, target)
        return OfflineCorpus(detail, path=target, **zh)
    except OSError:
        return OfflineCorpus(detail, text=text, **zh)


def _chunk_words(words: Iterable[str], max_words: int | None) -> list[list[str]]:
    if max_words is not None:
        words = itertools.islice(words, max_words)
    words = iter(words)
    sentences = []
    while chunk := list(itertools.islice(words, _SENTENCE_WORDS)):
        sentences.append(chunk)
    return sentences


def _iter_words(path: Path) -> Iterable[str]:
    """Stream the words of a one-line file without reading it whole."""
    rest = ""
    with open(path, encoding="ascii", errors="replace") as f:
        for chunk in iter(lambda: f.read(1 << 20), ""):
            chunk = rest + chunk
            words = chunk.split()
            rest = words.pop() if words and not chunk[-1].isspace() else ""
            yield from words
    if rest:
        yield rest


def load_text8(max_words: int | None = None, *, return_source: bool = False
               ) -> list[list[str]] | tuple[list[list[str]], DataSource]:
    """The text8 corpus as gensim-ready sentences: lists of at most 10,000 words (as gensim's
    ``Text8Corpus``), the first ``max_words`` words when given.

    Sources in order: ``$D2LMINI_DATA_DIR/text8/text8``, the cache, a download (unzipped and
    checked to be exactly 100,000,000 bytes), else a text8-style corpus (the same cleaning:
    lowercase a-z, digits spelled out) built from the English Wikipedia sample bundled with gensim
    (a little over half a million words, against text8's 17 million), cached after
    the first build. Logs one calm line naming the source (a failed download's error goes to the
    log at DEBUG level only, see :mod:`d2lmini.datahub`); with ``return_source=True`` also returns
    it as a :class:`~d2lmini.DataSource`, whose ``kind`` is ``'offline'`` for the substitute.
    """
    if max_words is not None:
        check_positive_int(max_words, "max_words")
    source = resolve("text8")
    if source.kind == "offline":
        words = _iter_words(source.path) if source.path is not None else iter(source.text.split())
        sentences = _chunk_words(words, max_words)
        num = sum(len(s) for s in sentences)
        source = replace(source, detail=f"{source.detail}, {num:,} words used",
                         detail_zh=f"{source.detail_zh or source.detail}，使用了其中 {num:,} 个词")
    else:
        size = source.path.stat().st_size
        if source.kind == "download" and size != _TEXT8_NUM_BYTES:
            raise ChecksumError(f"text8: the downloaded file has {size} bytes, expected "
                                f"{_TEXT8_NUM_BYTES}; delete it from the download cache and retry")
        sentences = _chunk_words(_iter_words(source.path), max_words)
    log.info("%s", source)
    return (sentences, source) if return_source else sentences
