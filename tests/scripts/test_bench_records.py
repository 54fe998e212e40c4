"""Every recorded benchmark can be reproduced: each ``bench/results/*.json`` names the commit it
ran (``git_commit``, wherever the record keeps it), and that commit exists in this repository."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDS = sorted((ROOT / "bench" / "results").glob("*.json"))


def _commits(value) -> list[str]:
    """Every ``git_commit`` value in a record, at any depth."""
    if isinstance(value, dict):
        found = [value["git_commit"]] if isinstance(value.get("git_commit"), str) else []
        return found + [c for v in value.values() for c in _commits(v)]
    if isinstance(value, list):
        return [c for v in value for c in _commits(v)]
    return []


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def history() -> None:
    if _git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout (an unpacked archive): there is no history to look in")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone lacks the older commits the records name; "
                    "`git fetch --unshallow` gives it the history this test reads")


def test_there_are_records():
    assert len(RECORDS) >= 5, RECORDS


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_each_record_names_a_commit_of_this_repository(path, history):
    commits = _commits(json.loads(path.read_text(encoding="utf-8")))
    assert commits, f"{path.name} names no git_commit"
    for commit in set(commits):
        found = _git("cat-file", "-e", f"{commit}^{{commit}}")
        assert found.returncode == 0, f"{path.name}: commit {commit} is not in this repository"


def test_the_check_finds_a_missing_commit(history):
    """The check can fail: a commit that no repository has is reported missing."""
    assert _git("cat-file", "-e", "0" * 40 + "^{commit}").returncode != 0
    assert _commits({"machine": {"git_commit": "abc"}, "runs": [{"git_commit": "def"}]}) == [
        "abc", "def"]
