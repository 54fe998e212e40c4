"""Grading untrusted notebooks (issue 39): tools/classroom/sandbox.py, grading.py,
student_side.py and the hostile classroom dry run (tools/classroom/cases/hostile.yml).

* the sandbox applies its limits and the sandbox user (checked on a harmless notebook first),
  reads broken files as untrusted input and decodes only data;
* the issue's four probes, graded as an instructor grades (`assign.py grade`, otter's
  autograder): a patched ``np.allclose`` gets 0, not 3 / 12; ``sys.modules['otter'] = None``
  gets 0 out of the full total, not 0 / 0; an endless loop stops at the time limit with a named
  error and the next submission is graded; a cell that writes outside its folder cannot;
* the hostile class of two chapters (both editions): every attempt gets no more than the blank
  notebook and is named in the report, totals never shrink, the honest submissions keep their
  grades, the instructor's files are unchanged and no process of the sandbox is left;
* a class of 30 with two hostile submissions: the 28 others get what the trusted dry run gives
  them, and each submission stops within its limits.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path

import pytest

from tools.classroom import assign, class_report, dry_run, sandbox

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_CHAPTERS = [("en", "mha-numpy"), ("zh", "attention-pytorch")]
AS_ROOT = sandbox.sandbox_ids() is not None
NEEDS_ROOT = "the grader drops privileges only when it runs as root (CI's `make test` does)"
GRACE_S = 10  # killing a submission's processes and removing its folder, after its limit


def _instructor_files() -> str:
    """What git sees of the checkout (tracked files changed, files added), and the marker
    files the hostile notebooks try to write elsewhere."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    others = [p for p in ("/etc/HOSTILE", os.path.expanduser("~/HOSTILE"))
              if os.path.exists(p)]
    return status + "\n".join(others)


def _sandbox_processes() -> list[int]:
    """Processes still running this checkout's student side."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if str(sandbox.STUDENT_SIDE).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


# ---------------------------------------------------------------------------- the sandbox
def test_limits_and_user_are_applied_on_a_harmless_notebook():
    limits = sandbox.Limits(wall_s=30, cpu_s=7, memory_mb=1536, processes=48, file_mb=5,
                            open_files=100)
    probe = ("import os, resource, socket\n"
             "info = (os.getuid(), [resource.getrlimit(r) for r in (resource.RLIMIT_CPU, "
             "resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE, "
             "resource.RLIMIT_NOFILE)], os.getcwd(), os.environ['HOME'], "
             "socket.if_nameindex())")
    with sandbox.Student(limits) as student:
        reply = student.request({"op": "run", "cells": [probe], "watch": []})
        assert reply["errors"] == [] and reply["changed"] == []
        uid, rlimits, cwd, home, interfaces = sandbox.decode(
            student.request({"op": "get", "name": "info"})["value"], student)
        root = student.root
    mb = 2 ** 20
    assert rlimits == [(7, 12), (1536 * mb,) * 2, (48, 48), (5 * mb,) * 2, (100, 100)]
    assert cwd == str(root / "work") and home == str(root / "home") and not root.exists()
    if AS_ROOT:
        assert uid == sandbox.sandbox_ids()[0] != 0
    if sandbox.network_isolation():
        assert [name for _, name in interfaces] == ["lo"]  # an empty network namespace


def test_a_function_of_the_notebook_is_called_through_the_pipe():
    cells = ["import numpy as np\n"
             "def f(a, k=1):\n    return {'sum': np.asarray(a).sum() * k, 'args': (a, k)}\n"
             "g = lambda: (_ for _ in ()).throw(ValueError('no'))"]
    with sandbox.Student(sandbox.Limits(wall_s=30)) as student:
        student.request({"op": "run", "cells": cells, "watch": []})
        f = sandbox.decode(student.request({"op": "get", "name": "f"})["value"], student)
        g = sandbox.decode(student.request({"op": "get", "name": "g"})["value"], student)
        out = f([1, 2, 3], k=2)
        assert out["sum"] == 12 and out["args"] == ([1, 2, 3], 2)
        with pytest.raises(sandbox.NotebookError, match="ValueError: no"):
            g()


@pytest.mark.parametrize("value", [
    {"t": "ndarray", "dtype": "|O", "shape": [1], "data": ""},  # object array: never
    {"t": "ndarray", "dtype": "<f8", "shape": [10 ** 9, 10 ** 9], "data": "AAAAAAAAAAA="},
    {"t": "pickle", "v": "gASV"}, {"t": "list", "v": 3}, [1, 2],
])
def test_decode_accepts_only_data(value):
    with pytest.raises((ValueError, TypeError)):
        sandbox.decode(value, None)


def test_encode_decode_round_trip():
    import numpy as np
    import torch

    values = [None, True, 3, 2 ** 70, float("nan"), 1.5, 1 + 2j, "é", ..., (1, [2, {3}]),
              {"a": (1,)}, np.arange(6.0).reshape(2, 3), np.float32(2.5), torch.ones(2, 2)]
    out = [sandbox.decode(sandbox.encode(v), None) for v in values]
    assert out[:4] == values[:4] and out[4] != out[4] and out[5:11] == values[5:11]
    assert np.array_equal(out[11], values[11]) and out[12] == np.float32(2.5)
    assert isinstance(out[13], torch.Tensor) and torch.equal(out[13], values[13])


def test_broken_files_are_named(tmp_path):
    limits = sandbox.Limits(notebook_mb=1)
    cases = {"corrupt": "not valid JSON", "huge": "more than the 1 MB",
             "wrong-kernel": "not Python", "no-code": "no code cells"}
    for kind, message in cases.items():
        path = tmp_path / f"{kind}.ipynb"
        path.write_bytes(dry_run.broken_file(kind, ["x = 1"], 1))
        with pytest.raises(sandbox.SubmissionError, match=message):
            sandbox.read_cells(path, limits)
    (tmp_path / "list.ipynb").write_text(json.dumps(
        {"cells": [{"cell_type": "code", "source": ["a = 1\n", "b = 2"]}, {"cell_type": 3}]}))
    assert sandbox.read_cells(tmp_path / "list.ipynb", limits) == ["a = 1\nb = 2"]


def test_the_mount_plan_reaches_through_private_folders(tmp_path):
    private = tmp_path / "home"
    (private / "py" / "lib").mkdir(parents=True)
    private.chmod(0o700)
    try:
        plan = sandbox.mount_plan([str(private / "py" / "lib"), str(tmp_path)])
    finally:
        private.chmod(0o755)
    assert plan[-1] == (str(private), "py")
    assert all(not os.stat(folder).st_mode & 0o001 or folder == str(private)
               for folder, _ in plan)


# ---------------------------------------------------------------------------- the probes
PROBES = {  # code put before the first answer of the blank student notebook
    "allclose": "import numpy as np, numpy.testing\nnp.allclose = lambda *a, **k: True\n"
                "numpy.testing.assert_allclose = lambda *a, **k: None",
    "otter": "import sys\nsys.modules['otter'] = None",
    "loop": "while True:\n    pass",
    "write": "import os\nopen(os.path.join(os.environ['PYTHONPATH'].split(os.pathsep)[0], "
             "'HOSTILE'), 'w').write('x')",
}


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    """The issue's four probes and the two honest notebooks, graded together with otter's
    autograder of mha-numpy (en), as `assign.py grade --csv` grades."""
    import copy

    import nbformat

    out = tmp_path_factory.mktemp("probes")
    dest = assign.make("en", "mha-numpy", out / "assign", repo_url="https://example.org/repo")
    blank = nbformat.read(dest / "student" / "mha-numpy.ipynb", as_version=4)
    subs = [dest / "student" / "mha-numpy.ipynb"]
    for name, code in PROBES.items():
        nb = copy.deepcopy(blank)
        cell = next(c for c in nb.cells if c.source.startswith("# Your answer"))
        cell.source = code + "\n" + cell.source
        subs.append(out / name / "mha-numpy.ipynb")
        subs[-1].parent.mkdir()
        nbformat.write(nb, subs[-1])
    subs.append(dest / "autograder" / "mha-numpy.ipynb")  # the solution, after the loop
    before = _instructor_files()
    limits = sandbox.Limits(wall_s=30, cpu_s=10)
    rows = assign.grade("en", "mha-numpy", subs, out / "assign", out / "grades.csv", limits)
    return ({Path(r["submission"]).parent.name: r for r in rows}, out / "grades.csv", before,
            _instructor_files())


def test_probe_patched_allclose_gets_zero(probes):
    rows, csv_path, _, _ = probes
    assert rows["student"]["total"] == 0 and rows["allclose"]["total"] == 0, rows["allclose"]
    notes = class_report.read_grades(csv_path)[1]["notes"]
    allclose = next(v for k, v in notes.items() if "allclose" in k)
    assert "replaced what the tests use: numpy.allclose" in allclose[0]


def test_probe_otter_removed_keeps_the_total(probes):
    rows, _, _, _ = probes
    full = rows["autograder"]["possible"]
    assert full == rows["autograder"]["total"] == 12 and rows["otter"]["possible"] == full
    assert rows["otter"]["total"] == 0


def test_probe_endless_loop_times_out_and_grading_goes_on(probes):
    rows, csv_path, _, _ = probes
    details = class_report.read_grades(csv_path)[1]
    loop = next(k for k in details["notes"] if "/loop/" in k)
    assert "limit" in details["notes"][loop][0], details["notes"][loop]
    assert details["seconds"][loop] <= details["limits"]["wall_s"] + GRACE_S
    assert rows["loop"]["total"] == 0 and rows["autograder"]["total"] == 12  # graded after
    report = class_report.report(csv_path, "en")
    assert "note: CPU time limit (10 s) reached" in report or "note: time limit" in report


def test_probe_writing_outside_its_folder_is_impossible(probes):
    rows, _, before, after = probes
    if not AS_ROOT:
        pytest.skip(NEEDS_ROOT)
    assert not (ROOT / "HOSTILE").exists() and before == after
    assert rows["write"]["total"] == 0


# ---------------------------------------------------------------------------- the hostile class
@functools.cache
def _hostile(lang: str, chapter: str) -> tuple[dict, str, str, list[int]]:
    before = _instructor_files()
    result = dry_run.run_hostile(chapter, lang)
    return result, before, _instructor_files(), _sandbox_processes()


@functools.cache
def _trusted(lang: str, chapter: str) -> dict[str, dict]:
    """The rows of the trusted dry run (every made-up notebook in one process)."""
    return {r["submission"]: r for r in dry_run.run(chapter, lang)["rows"]}


@pytest.fixture(params=HOSTILE_CHAPTERS, ids=[f"{lang}-{ch}" for lang, ch in HOSTILE_CHAPTERS])
def hostile(request):
    lang, chapter = request.param
    result, before, after, left = _hostile(lang, chapter)
    rows = {r["submission"]: r for r in result["rows"]}
    return lang, chapter, rows, result["details"], (before, after, left, result)


def test_every_attempt_gets_no_more_than_the_blank_notebook(hostile):
    _, chapter, rows, details, _ = hostile
    attempts = dry_run.load_hostile()
    assert set(attempts) <= set(rows)
    for name in attempts:
        for label in details["tests"]:
            assert rows[name][label] <= rows["blank"][label], (chapter, name, label, rows[name])


def test_every_attempt_is_named_in_the_report(hostile):
    _, chapter, _, details, _ = hostile
    for name, attempt in dry_run.load_hostile().items():
        if name == "network" and not sandbox.network_isolation():
            continue  # test_the_network_is_isolated says why
        notes = " | ".join(details["notes"][name])
        assert attempt["expect"] in notes, f"{chapter}: {name}: {notes}"


def test_the_network_is_isolated(hostile):
    if not sandbox.network_isolation():
        pytest.skip("this platform gives the grader no network namespace (Linux, as root or "
                    "with user namespaces): the notebook can reach the network")
    assert "connected: []" in hostile[3]["notes"]["network"][0]


def test_totals_never_shrink(hostile):
    _, _, rows, details, _ = hostile
    possible = sum(c["points"] for cases in details["tests"].values() for c in cases)
    assert possible > 0
    for name, row in rows.items():
        assert row["possible"] == possible, name
        assert set(details["tests"]) <= set(row), name


def test_the_honest_notebooks_keep_their_grades(hostile):
    lang, chapter, rows, _, _ = hostile
    trusted = _trusted(lang, chapter)
    for name in ("solution", "blank"):
        assert rows[name] == trusted[name], (name, rows[name], trusted[name])
    assert rows["solution"]["total"] == rows["solution"]["possible"]


def test_the_instructors_files_are_unchanged_and_no_process_is_left(hostile):
    _, _, _, details, (before, after, left, _) = hostile
    assert not left, f"processes of the sandbox still running: {left}"
    if not AS_ROOT:
        pytest.skip(NEEDS_ROOT)
    assert details["isolation"]["user"] == sandbox.SANDBOX_USER
    assert before == after and not (ROOT / "HOSTILE").exists()


def test_the_report_names_the_hostile_submissions(hostile, tmp_path):
    lang, _, _, details, (_, _, _, result) = hostile
    dry_run.write(result, tmp_path / "grades.csv")
    text = class_report.report(tmp_path / "grades.csv", lang)
    word = {"en": "note: ", "zh": "说明："}[lang]
    assert f"{word}{details['notes']['endless-loop'][0]}" in text


# ---------------------------------------------------------------------------- a class of 30
def test_a_class_of_30_with_two_hostile_submissions():
    lang, chapter = "zh", "mha-numpy"
    trusted = _trusted(lang, chapter)
    names = list(trusted)
    honest = [names[k % len(names)] for k in range(28)]
    result = dry_run.run_hostile(chapter, lang, ["endless-loop", "fork-bomb"], honest)
    rows, details = result["rows"], result["details"]
    assert len(rows) == 30
    for row in rows:
        name = row["submission"]
        assert details["seconds"][name] <= details["limits"]["wall_s"] + GRACE_S, name
        if name.startswith("student-"):
            made_up = name.split("-", 2)[2]
            assert {**row, "submission": made_up} == trusted[made_up], name
        else:
            assert row["total"] == 0 and "limit" in details["notes"][name][0], name
    assert not _sandbox_processes()
