"""tools/ci_times.py: the table of where a CI run's time goes adds up, counts a build once (in
the build, not in the test that started it) and is written where .ci/run says."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tools import ci_times

ROOT = Path(__file__).resolve().parents[2]

def test_nothing_is_recorded_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(ci_times.ENV, raising=False)
    ci_times.record("set-up", 0.0, 1.0)
    ci_times.record_intervals("tests", [(0.0, 1.0)])
    assert not list(tmp_path.iterdir())


def test_parts_add_up_and_a_build_inside_a_test_counts_once(tmp_path, monkeypatch):
    log = tmp_path / "times.jsonl"
    monkeypatch.setenv(ci_times.ENV, str(log))
    ci_times.record("set-up", 100.0, 160.0)
    # a build that a browser test started: 200-500 inside the test's 190-520
    ci_times.record("nothing-at-all build, en", 200.0, 500.0, executed={"mha-numpy": 12.5})
    ci_times.record_intervals("tests: in Chromium", [(190.0, 520.0), (520.0, 530.0)], tests=2)
    ci_times.record_intervals("tests: library", [(170.0, 180.0), (182.0, 184.0)], tests=2)
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert lines[2]["intervals"] == [[190.0, 530.0]]  # joined where they touch

    summary = ci_times.summarise(lines, 90.0, 600.0)
    seconds = {p["part"]: p["seconds"] for p in summary["parts"]}
    assert seconds == {"set-up": 60.0, "nothing-at-all build, en": 300.0,
                       "tests: in Chromium": 40.0, "tests: library": 12.0}
    assert summary["total"] == 510.0
    assert summary["rest"] == 510.0 - 60.0 - 12.0 - 340.0  # before, between and after the parts
    assert [p["part"] for p in summary["parts"]][0] == "set-up"  # in the order they began
    text = ci_times.table(summary)
    assert "executed mha-numpy" in text and text.splitlines()[-1].split()[:2] == ["total", "510"]


def test_the_command_writes_the_json_and_prints_the_table(tmp_path):
    log = tmp_path / "times.jsonl"
    log.write_text(json.dumps({"part": "set-up", "start": 0.0, "end": 30.0}) + "\n"
                   + '{"part": "cut sho', encoding="utf-8")  # a line a stopped process cut
    out = subprocess.run([sys.executable, "-m", "tools.ci_times", "0", "40"],
                         env={"BOOK_TIMES_LOG": str(log), "PATH": "/usr/bin:/bin",
                              "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert "set-up" in out and "the rest" in out
    written = json.loads((tmp_path / "times.json").read_text(encoding="utf-8"))
    assert written["total"] == 40.0 and written["rest"] == 10.0


def test_a_build_beside_the_tests_is_not_taken_out_of_them(tmp_path, monkeypatch):
    log = tmp_path / "times.jsonl"
    monkeypatch.setenv(ci_times.ENV, str(log))
    ci_times.record_intervals("tests: in Chromium", [(0.0, 100.0)], tests=5)
    monkeypatch.setenv("BOOK_TIMES_BESIDE", "1")
    ci_times.record("published build (real data), en", 20.0, 140.0)
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    summary = ci_times.summarise(lines, 0.0, 150.0)
    seconds = {p["part"]: p["seconds"] for p in summary["parts"]}
    assert seconds == {"tests: in Chromium": 100.0, "published build (real data), en": 120.0}
    assert summary["rest"] == 10.0
    assert "[beside the tests]" in ci_times.table(summary)


def test_the_editions_of_a_build_side_by_side_are_one_part(tmp_path, monkeypatch):
    log = tmp_path / "times.jsonl"
    monkeypatch.setenv(ci_times.ENV, str(log))
    ci_times.record("nothing-at-all build", 10.0, 310.0, edition="zh",
                    executed={"training-translation": 200.0, "mha-numpy": 4.0}, shared=[])
    ci_times.record("nothing-at-all build", 11.0, 300.0, edition="en", executed={},
                    shared=["mha-numpy"])
    ci_times.record("nothing-at-all build", 400.0, 420.0, edition="en", executed={},
                    shared=[])  # a later build of the same kind: a part of its own
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    parts = ci_times.summarise(lines, 0.0, 500.0)["parts"]
    assert [(p["part"], p["seconds"]) for p in parts] == [("nothing-at-all build", 300.0),
                                                         ("nothing-at-all build", 20.0)]
    assert [e["edition"] for e in parts[0]["editions"]] == ["zh", "en"]
    text = ci_times.table(ci_times.summarise(lines, 0.0, 500.0))
    assert "zh: executed 2 chapters in 204 s, slowest training-translation 200 s" in text
    assert "en: executed nothing (every chapter from the cache); 1 from a build" in text
