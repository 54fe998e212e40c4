"""The published book: built from the real data sets in ``D2LMINI_DATA_DIR``, as CI builds it
(``D2LMINI_DATA_DIR=../shared/data make book``) and as a classroom or a mirror would.

The real files come from the explicit ``shared_data_dir`` fixture, never from the environment;
where they are missing the test is skipped and says so. The build goes to ``_build`` (what
``make book`` writes), so that a following ``make book`` with the same data executes nothing.
"""
from __future__ import annotations

import hashlib

import pytest
from bs4 import BeautifulSoup
from built_book import LANGS, ROOT, nothing_at_all_env, pages_showing_machine_paths, run_build

import d2lmini as d2l

pytestmark = pytest.mark.book

PUBLISHED = ROOT / "_build"


@pytest.fixture(scope="module")
def published(shared_data_dir, tmp_path_factory):
    for name, rel in d2l.DATASET_FILES.items():
        path = shared_data_dir / rel
        if name in d2l.PUBLISHED_SHA256 and path.is_file():
            # the shared copies are the bytes a reader's download gives (shared/data/README.md)
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            assert digest == d2l.PUBLISHED_SHA256[name], f"{rel}: unexpected SHA-256 {digest}"
    env = nothing_at_all_env(tmp_path_factory.mktemp("empty-cache"))
    env["D2LMINI_DATA_DIR"] = str(shared_data_dir)
    run_build(env=env, build_dir=PUBLISHED)
    return PUBLISHED / "html"


def test_published_pages_show_no_path_of_the_build_machine(published):
    bad = pages_showing_machine_paths(published)
    assert not bad, "published pages show paths of this machine:\n" + "\n".join(bad)


@pytest.mark.parametrize("lang", LANGS)
def test_published_build_read_the_real_pairs(published, lang):
    page = BeautifulSoup((published / lang / "training-translation.html").read_text(
        encoding="utf-8"), "html.parser").get_text()
    assert "local data directory (the copy the published book uses)" in page
    assert "offline corpus" not in page.split("[d2lmini]", 1)[-1].split("\n", 1)[0]
