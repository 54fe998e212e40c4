"""d2lmini.book.records: finding recorded benchmark results for a page to show."""

import json

import pytest

from d2lmini import book


def test_recorded_benchmark_reads_the_json_of_the_repository_above(tmp_path):
    results = tmp_path / "repo" / "bench" / "results"
    results.mkdir(parents=True)
    (results / "ablations.json").write_text(json.dumps({"benchmark": "ablations"}))
    page = tmp_path / "repo" / "book" / "en"
    page.mkdir(parents=True)
    assert book.results_dir(page) == results
    assert book.recorded_benchmark("ablations", page) == {"benchmark": "ablations"}
    assert book.recorded_benchmark("decode", page) is None


def test_recorded_benchmark_falls_back_to_the_package_repository(tmp_path):
    # a folder with no bench/results above it: the repository holding d2lmini (this one)
    assert book.results_dir(tmp_path) is not None
    assert book.results_dir(tmp_path).name == "results"


def test_recorded_benchmark_rejects_paths():
    with pytest.raises(ValueError, match="file stem"):
        book.recorded_benchmark("../secrets")
