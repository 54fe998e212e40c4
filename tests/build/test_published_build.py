"""The published book: built from the real data sets in ``D2LMINI_DATA_DIR``, as CI builds it
(``D2LMINI_DATA_DIR=../shared/data make book``) and as a classroom or a mirror would.

The real files come from the explicit ``shared_data_dir`` fixture, never from the environment;
where they are missing the test is skipped and says so. The build goes to ``_build`` (what
``make book`` writes), so that a following ``make book`` with the same data executes nothing;
it runs beside the other tests once the nothing-at-all build is done (``built_book``).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
import built_book
from built_book import LANGS, ROOT, pages_showing_machine_paths

import d2lmini as d2l

pytestmark = pytest.mark.book



@pytest.fixture(scope="module")
def published(shared_data_dir):
    for name, rel in d2l.datahub.DATASET_FILES.items():
        path = shared_data_dir / rel
        if name in d2l.datahub.PUBLISHED_SHA256 and path.is_file():
            # the shared copies are the bytes a reader's download gives (shared/data/README.md)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest == d2l.datahub.PUBLISHED_SHA256[name], \
                f"{rel}: unexpected SHA-256 {digest}"
    # built beside the other tests since the nothing-at-all build ended (built_book), from
    # these files; the chapters that read no real data come from the nothing-at-all build
    assert built_book.REAL_DATA == shared_data_dir
    return built_book.published_build()


def test_published_pages_show_no_path_of_the_build_machine(published):
    bad = pages_showing_machine_paths(published)
    assert not bad, "published pages show paths of this machine:\n" + "\n".join(bad)


@pytest.mark.parametrize("lang", LANGS)
def test_published_build_read_the_real_pairs(published, lang):
    page = BeautifulSoup((published / lang / "training-translation.html").read_text(
        encoding="utf-8"), "html.parser").get_text()
    said = {"en": "local data directory (the copy the published book uses)",
            "zh": "本地数据目录（与正式发布的版本所用的副本相同）"}
    assert said[lang] in page
    announcement = page.split("[d2lmini]", 1)[-1].split("\n", 1)[0]
    assert "offline corpus" not in announcement and "离线语料" not in announcement


def _cache_folders() -> dict[str, Path]:
    """The jupyter cache folders of this code: {"offline": ..., "published": ...} by the kinds of
    data in their KEY.json."""

    from tools.build import build_book

    found = {}
    code = build_book.cache_key()
    for folder in (ROOT / "_build" / ".jupyter_cache").glob(f"data-*-code-{code}"):
        key = json.loads((folder / "KEY.json").read_text(encoding="utf-8"))
        kinds = set(key["data"].values())
        found["offline" if kinds == {"offline"} else "published"] = folder
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_a_chapter_reading_no_real_data_is_executed_once(published, lang):
    """The published build takes from the nothing-at-all build each chapter that read no data
    set the two have differently (build_book.share_executions): the same executed notebook, with
    the same execution time. The chapters that read a data set the two builds have differently
    (their kernels recorded it: the translation pairs, Tiny Shakespeare) are executed with the
    real ones."""
    from jupyter_cache import get_cache

    from tools.build import build_book

    folders = _cache_folders()
    assert set(folders) == {"offline", "published"}, folders
    records = {}
    for which, folder in folders.items():
        records[which] = {Path(r.uri).stem: r for r in get_cache(str(folder / lang))
                          .list_cache_records()}
    reads = build_book._cell_reads(folders["offline"] / lang / "cell-times.jsonl")
    data = {which: json.loads((folder / "KEY.json").read_text(encoding="utf-8"))["data"]
            for which, folder in folders.items()}
    differ = {name for name, kind in data["published"].items()
              if kind != data["offline"].get(name)}
    assert {"fra-eng", "cmn-eng", "tinyshakespeare"} <= differ, data
    from tools.build.book_sphinx.timing import cell_digest

    shared, own = [], []
    for page, record in records["published"].items():
        theirs = records["offline"].get(page)
        same = theirs is not None and theirs.hashkey == record.hashkey and \
            theirs.data == record.data
        nb = get_cache(str(folders["published"] / lang)).get_cache_bundle(record.pk).nb
        read = set().union(*[reads.get(cell_digest(c.source)) or set() for c in nb.cells
                             if c.cell_type == "code" and c.source.strip()])
        pairs = read & differ
        (own if pairs else shared).append(page)
        assert same != bool(pairs), (f"{lang}/{page} read {sorted(read)} and was "
                                     f"{'shared' if same else 'executed again'}")
    assert "mha-numpy" in shared and "training-translation" in own, (shared, own)
    assert "modern-transformer" in own, (shared, own)


def test_published_zh_edition_shows_chinese(published):
    """The published build's zh pages, with the real data's sentences, are held to what
    ``test_zh_reader.py`` holds the nothing-at-all build to."""
    found = {k: v for k, v in built_book.zh_reader_problems(published / "zh").items() if v}
    assert not found, "English on the published zh pages:\n" + "\n".join(
        f"{kind}: {item}" for kind, items in found.items() for item in items)
