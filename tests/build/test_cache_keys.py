"""Outputs keyed by everything that made them: the executed-notebook cache folder of
``tools/build/build_book.py`` and the trained-weight key of ``d2lmini.book.cache`` change when a
library function changes, also one that no chapter cell shows, and when the environment
changes."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tools.build import build_book
from d2lmini.book import cache

ROOT = Path(__file__).resolve().parents[2]

@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """A temporary copy of the d2lmini package (its code and corpora)."""
    dest = tmp_path / "d2lmini"
    shutil.copytree(ROOT / "d2lmini", dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _change_a_library_function(package: Path) -> None:
    """Edit the body of beam_search, a function no ``# @save`` cell of the book shows."""
    path = package / "decode.py"
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^def beam_search\(.*?\n(\s+)\"\"\"", text, re.S | re.M)
    assert match, "beam_search not found in decode.py"
    indent = match.group(1)
    path.write_text(text[:match.start(1)] + f"{indent}_changed = True  # a test's edit\n"
                    + text[match.start(1):], encoding="utf-8")


def test_a_changed_library_function_gives_the_chapters_another_cache(package_copy, monkeypatch):
    before = build_book.cache_key(package_copy)
    assert before == build_book.cache_key(package_copy)  # stable
    monkeypatch.setattr(build_book, "CACHE_ROOT", package_copy.parent / "jupyter_cache")
    folder_before = build_book.jupyter_cache_dir("en", package_copy)
    _change_a_library_function(package_copy)
    after = build_book.cache_key(package_copy)
    folder_after = build_book.jupyter_cache_dir("en", package_copy)
    assert after != before
    # another, empty folder: myst-nb finds no executed notebook there and executes the chapters
    assert folder_after != folder_before and not folder_after.exists()
    assert f"-code-{after}" in folder_after.parent.name
    key = (folder_after.parent / "KEY.json").read_text(encoding="utf-8")
    assert build_book.package_fingerprint(package_copy) in key


def test_a_corpus_file_is_part_of_the_key(package_copy):
    before = build_book.package_fingerprint(package_copy)
    corpus = sorted((package_copy / "corpora").iterdir())[0]
    corpus.write_bytes(corpus.read_bytes() + b"\n")
    assert build_book.package_fingerprint(package_copy) != before


def test_the_environment_is_part_of_the_key(monkeypatch):
    env = dict(build_book.environment_description())
    assert env["packages"] and all("==" in p for p in env["packages"])
    assert any(p.startswith("torch==") for p in env["packages"])
    before = build_book.cache_key()
    for field, value in (("cjk_font", None), ("packages", env["packages"][1:]),
                         ("python", "3.0.0")):
        monkeypatch.setattr(build_book, "environment_description",
                            lambda field=field, value=value: {**env, field: value})
        assert build_book.cache_key() != before, field


def test_the_weight_key_follows_the_library(package_copy):
    assert len(cache.library_fingerprint()) == 16  # the installed package's own files
    before = cache.library_fingerprint(package_copy)
    assert before == cache.library_fingerprint(str(package_copy))  # stable
    _change_a_library_function(package_copy)
    assert cache.library_fingerprint(package_copy) != before
    with pytest.raises(ValueError, match="package"):
        cache.library_fingerprint(package_copy / "missing")


def test_weight_keys_include_the_library_fingerprint(monkeypatch):
    key = cache.fingerprint(["go", "."], {"d": 32})
    monkeypatch.setattr(cache, "library_fingerprint", lambda package=None: "0" * 16)
    assert cache.fingerprint(["go", "."], {"d": 32}) != key


def test_the_workflow_restores_the_newest_cache_of_each_job():
    """Restoring an older cache is safe (the folders inside are keyed by what made them, which
    the tests above check), so the workflow restores the newest one with the job's prefix, and
    keeps the trained weights with the executed notebooks."""
    from tools.bookmeta import load_yaml

    jobs = load_yaml(ROOT / ".github" / "workflows" / "book.yml")["jobs"]
    for job in ("cpu", "gpu"):
        (step,) = [s for s in jobs[job]["steps"] if s.get("uses", "").startswith("actions/cache")
                   and ".jupyter_cache" in s["with"]["path"]]
        prefix = step["with"]["restore-keys"].strip()
        assert step["with"]["key"].startswith(prefix) and prefix.endswith(f"-{job}-"), job
        assert "_build/.train_cache" in step["with"]["path"], job


# ---------------------------------------------------------------------------- the PDF's cache
# CI once published a PDF whose English figures were not the HTML's: its chapters had been
# executed again, and the record count of the cache did not change (a re-executed notebook
# replaces its record). tools/build/build_pdf.py builds the editions in threads.
def test_the_key_is_computed_once_when_threads_ask_for_it_together():
    import threading
    import time

    calls = []

    @build_book._once
    def slow_key():
        calls.append(1)
        time.sleep(0.05)  # long enough for every thread to arrive while the first computes
        return object()

    results, barrier = [], threading.Barrier(8)

    def ask():
        barrier.wait()
        results.append(slow_key())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(r) for r in results}) == 1


def test_the_cjk_font_in_the_key_is_one_file_not_the_font_cache(monkeypatch):
    build_book.environment_description.cache_clear()
    try:
        files = build_book.environment_description()["cjk_font_files"]
        if build_book.environment_description()["cjk_font"] is None:
            assert files == []
        else:  # the file matplotlib draws with, however many copies its font list holds
            assert len(files) == 1 and re.fullmatch(r"[^:/]+:\d+", files[0]), files
    finally:
        build_book.environment_description.cache_clear()


def test_a_re_executed_notebook_is_seen_though_the_count_stays(tmp_path):
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from tools.build import build_pdf

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    nb.cells[0].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                                  execution_count=1)]
    nb.cells[0].execution_count = 1
    cache_dir = tmp_path / "cache"
    cache = get_cache(cache_dir)
    cache.cache_notebook_bundle(CacheBundleIn(nb, str(tmp_path / "page.md")), overwrite=True)
    before = build_pdf.cache_records(cache_dir)
    assert build_pdf.executed_pages(before, build_pdf.cache_records(cache_dir)) == []
    cache.cache_notebook_bundle(CacheBundleIn(nb, str(tmp_path / "page.md")), overwrite=True)
    after = build_pdf.cache_records(cache_dir)
    assert len(after) == len(before)
    assert build_pdf.executed_pages(before, after) == ["page"]


def test_the_pdf_warns_when_the_html_read_another_cache(tmp_path):
    import json

    from tools.build import build_pdf

    conf = tmp_path / ".conf" / "html" / "en"
    conf.mkdir(parents=True)
    html_cache = tmp_path / "jc" / "data-a-code-b" / "en"
    (conf / "config.json").write_text(json.dumps({"nb_execution_cache_path": str(html_cache)}))
    assert build_pdf.other_cache_than_html("en", "full", html_cache, tmp_path) == ""
    other = tmp_path / "jc" / "data-a-code-c" / "en"
    warning = build_pdf.other_cache_than_html("en", "full", other, tmp_path)
    assert "read another jupyter cache" in warning and str(html_cache) in warning
    assert "executed" not in warning  # not confused with the re-execution report
    assert build_pdf.other_cache_than_html("zh", "full", other, tmp_path) == ""  # no zh HTML


# ------------------------------------------------- one execution for builds with other data
def _executed(*sources: str):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A page")])
    for i, src in enumerate(sources, start=1):
        cell = nbformat.v4.new_code_cell(src)
        cell.execution_count = i
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"ran {i}\n")]
        nb.cells.append(cell)
    return nb


def _a_build_with(root, fingerprint: str, digests: dict, pages: dict, times: list[dict]):
    """A jupyter cache folder ``data-<fingerprint>-code-c0de`` of edition en holding ``pages``
    ({uri: notebook}) and the cell-times lines ``times``."""
    import json

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    folder = root / f"data-{fingerprint}-code-c0de"
    (folder / "en").mkdir(parents=True)
    (folder / "KEY.json").write_text(json.dumps({"datasets": digests}), encoding="utf-8")
    cache = get_cache(str(folder / "en"))
    for uri, nb in pages.items():
        cache.cache_notebook_bundle(CacheBundleIn(nb, uri, data={"execution_seconds": 1.0}))
    (folder / "en" / "cell-times.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in times), encoding="utf-8")
    return folder


def test_a_chapter_that_read_no_differing_data_is_executed_once_for_both_builds(
        tmp_path, monkeypatch):
    import json

    from tools.build.book_sphinx.timing import cell_digest
    from jupyter_cache import get_cache

    offline = {"fra-eng": "offline:1", "text8": "offline:2"}
    published = {"fra-eng": "local:3", "text8": "offline:2"}
    pages = {
        "/book/en/no-data.md": _executed("import d2lmini as d2l", "x = 1"),
        "/book/en/same-data.md": _executed("import d2lmini as d2l", "words = d2l.load_text8()"),
        "/book/en/other-data.md": _executed("import d2lmini as d2l", "pairs = d2l.load_nmt()"),
        "/book/en/unrecorded.md": _executed("import d2lmini as d2l", "y = 2"),
        "/book/en/cut-short.md": _executed("import d2lmini as d2l", "z = 3"),
    }
    times = [{"cell": cell_digest("import d2lmini as d2l"), "seconds": 2.0, "reads": []},
             {"cell": cell_digest("x = 1"), "seconds": 0.5, "reads": []},
             {"cell": cell_digest("words = d2l.load_text8()"), "seconds": 9.0,
              "reads": ["text8"]},
             {"cell": cell_digest("pairs = d2l.load_nmt()"), "seconds": 7.0,
              "reads": ["fra-eng"]},
             {"cell": cell_digest("y = 2"), "seconds": 0.1},  # made before reads were recorded
             {"cell": cell_digest("z = 3"), "seconds": 0.1, "reads": None}]  # log unreadable
    root = tmp_path / "jupyter_cache"
    _a_build_with(root, "0ff", offline, pages, times)
    _a_build_with(root, "111", {"fra-eng": "local:3"}, pages, times)  # other code: not read
    (root / "data-111-code-c0de").rename(root / "data-111-code-beef")
    monkeypatch.setattr(build_book, "CACHE_ROOT", root)
    monkeypatch.setattr(build_book, "cache_key", lambda package=None: "c0de")
    monkeypatch.setattr(build_book, "dataset_digests", lambda: published)
    monkeypatch.setattr(build_book, "data_fingerprint", lambda: ("9ub", {}))
    monkeypatch.setattr(build_book, "package_fingerprint", lambda package=None: "p")
    monkeypatch.setattr(build_book, "environment_description",
                        lambda: {"python": "3", "cjk_font": None, "packages": []})

    assert sorted(build_book.share_executions("en")) == ["no-data", "same-data"]
    target = root / "data-9ub-code-c0de" / "en"
    cache = get_cache(str(target))
    # myst-nb finds them (matched by their code cells) with the other build's outputs ...
    record = cache.match_cache_notebook(pages["/book/en/same-data.md"])
    out = cache.get_cache_bundle(record.pk).nb
    assert [c.outputs[0]["text"] for c in out.cells] == ["ran 1\n", "ran 2\n"]
    for uri in ("/book/en/other-data.md", "/book/en/unrecorded.md", "/book/en/cut-short.md"):
        with pytest.raises(KeyError):
            cache.match_cache_notebook(pages[uri])
    # ... and with the times of the run that made them
    copied = [json.loads(line) for line in
              (target / "cell-times.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {t["cell"] for t in copied} == {cell_digest(s) for s in
                                           ("import d2lmini as d2l", "x = 1",
                                            "words = d2l.load_text8()")}
    assert build_book.share_executions("en") == []  # nothing twice


def test_cell_reads_join_every_run_of_a_cell(tmp_path):
    times = tmp_path / "cell-times.jsonl"
    times.write_text('{"cell": "a", "seconds": 1, "reads": []}\n'
                     '{"cell": "a", "seconds": 1, "reads": ["text8"]}\n'
                     '{"cell": "b", "seconds": 1, "reads": ["fra-eng"]}\n'
                     '{"cell": "b", "seconds": 1}\n'
                     '{"cell": "c", "seco', encoding="utf-8")
    assert build_book._cell_reads(times) == {"a": {"text8"}, "b": None}


def test_a_docstring_or_a_comment_keeps_the_keys(package_copy):
    """Executed chapters and trained weights are keyed by the code: editing a docstring or a
    comment keeps both keys; the API page's key (every byte) follows the docstring."""
    path = package_copy / "decode.py"
    text = path.read_text(encoding="utf-8")
    code, files = cache.library_fingerprint(package_copy), build_book.library_files(package_copy)
    edited = text.replace('"""', '"""An edited docstring. ', 1).replace(
        "\nimport ", "\n# a new comment\nimport ", 1)
    assert edited != text
    path.write_text(edited, encoding="utf-8")
    assert cache.library_fingerprint(package_copy) == code
    assert build_book.library_files(package_copy) != files
    path.write_text(edited.replace("\nimport ", "\nimport math  # code\nimport ", 1),
                    encoding="utf-8")
    assert cache.library_fingerprint(package_copy) != code  # a line of code is code


def test_keys_asked_for_from_threads_at_once(package_copy):
    """The build computes the keys of both editions in two threads (and the PDF build in
    four): every thread gets the key one thread gets, and none fails. (A busy CI run once
    failed here: ast.parse in two threads at once raised "SystemError: AST constructor
    recursion depth mismatch" under CPython 3.11. The race is rare; without the lock in
    d2lmini.book.cache this test catches it only now and then.)"""
    from concurrent.futures import ThreadPoolExecutor

    alone = cache.library_fingerprint(package_copy)
    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = list(pool.map(lambda _: cache.library_fingerprint(package_copy), range(64)))
    assert set(keys) == {alone}
