#!/usr/bin/env python
"""Graded assignments from the chapters' exercises, with otter-grader (no Docker, no network).

    python tools/assign.py                            # all graded chapters, both editions
    python tools/assign.py make mha-numpy --lang en   # one chapter, one edition
    python tools/assign.py list                       # the graded exercises of each chapter
    python tools/assign.py grade mha-numpy --lang en submissions/*.ipynb [--csv grades.csv]

``make`` writes, per edition and chapter, into ``_build/assign/<lang>/<chapter>/``:

* ``student/<chapter>.ipynb``: the notebook to hand out. The chapter without any solution; each
  graded exercise has an answer cell (the names its tests check, set to ``...``) and a
  ``grader.check("<exercise label>")`` cell that runs its public tests;
* ``autograder/autograder.zip``: what grades a submission (``otter run``), and
  ``autograder/<chapter>.ipynb``, the same notebook with the worked solutions.

The exercises' tests are code cells of the chapter's source (tagged ``exercise-test``, hidden on
the pages, identical in both editions), which the book build runs against the worked solutions.
``grade`` executes each submission in this Python environment (the book's requirements plus
otter-grader; nothing is downloaded) and prints, or writes as CSV, the points of every graded
exercise. Grading executes the whole notebook: seconds for the NumPy chapter, minutes on a CPU
for the training chapter.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exercises  # noqa: E402
import export_notebooks  # noqa: E402
from bookmeta import LANGS, ROOT, notebooks  # noqa: E402

OUT = ROOT / "_build" / "assign"
OTTER_REQUIREMENT = ("otter", "otter-grader>=6")


class AssignError(Exception):
    """A step failed; ``main`` prints the message and exits with status 1."""


def log(msg: str) -> None:
    print(f"[assign] {msg}", flush=True)


def otter_command() -> list[str]:
    exe = Path(sys.executable).with_name("otter")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("otter")
    if found is None:
        raise AssignError("otter-grader is not installed (pip install otter-grader)")
    return [found]


def graded_exercises(lang: str, chapter: str) -> list[exercises.Exercise]:
    _, segments = exercises.read_chapter(ROOT / "book" / lang / f"{chapter}.md")
    return [ex for ex in exercises.exercises(segments) if ex.tests]


def graded_chapters(lang: str) -> list[str]:
    """The chapters (toc order) that have at least one exercise with tests."""
    return [name for name in notebooks(lang) if graded_exercises(lang, name)]


def master_notebook(lang: str, chapter: str, repo_url: str) -> nbformat.NotebookNode:
    """The chapter in otter's assignment format, with the book's install cell first."""
    src = ROOT / "book" / lang / f"{chapter}.md"
    _, segments = exercises.read_chapter(src)
    config = {
        "name": chapter,
        "init_cell": True,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": False,
        "solutions_pdf": False,
        "template_pdf": False,
        "generate": True,
        "tests": {"files": False, "ok_format": True},
    }
    prefix, first = exercises.numbering(src)
    cells = exercises.otter_master_cells(segments, lang, config, first, prefix)
    nb = export_notebooks.notebook(cells, src, lang, repo_url, extra=(OTTER_REQUIREMENT,),
                                   name=f"{chapter}.ipynb")
    # otter reads the configuration from the first cells: it must come before the install cell
    nb.cells = [nb.cells[1], nb.cells[0], *nb.cells[2:]]
    return nb


def make(lang: str, chapter: str, out: Path = OUT, *, repo_url: str | None = None,
         run_tests: bool = False) -> Path:
    """Write the student notebook and the autograder of one chapter; return its folder."""
    if not graded_exercises(lang, chapter):
        raise AssignError(f"{lang}/{chapter}: no exercise with tests (see `assign.py list`)")
    repo_url = repo_url or export_notebooks.repository_url()
    dest = out / lang / chapter
    with tempfile.TemporaryDirectory() as tmp:
        master = Path(tmp) / f"{chapter}.ipynb"
        nbformat.write(master_notebook(lang, chapter, repo_url), master)
        dist = Path(tmp) / "dist"
        cmd = [*otter_command(), "assign", "--no-pdfs", str(master), str(dist)]
        if not run_tests:
            cmd.insert(-2, "--no-run-tests")
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise AssignError(f"{lang}/{chapter}: otter assign failed:\n"
                              f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        zips = sorted((dist / "autograder").glob("*.zip"))
        if len(zips) != 1:
            raise AssignError(f"{lang}/{chapter}: expected one autograder zip, got {zips}")
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        (dest / "autograder").mkdir()
        shutil.copyfile(zips[0], dest / "autograder" / "autograder.zip")
        shutil.copyfile(dist / "autograder" / f"{chapter}.ipynb",
                        dest / "autograder" / f"{chapter}.ipynb")
        shutil.copytree(dist / "student", dest / "student")
    for which in ("student", "autograder"):
        tidy(dest / which / f"{chapter}.ipynb")
    return dest


def tidy(path: Path) -> None:
    """The install cell first (otter puts its ``import otter`` cell on top), and without the
    code cells that otter emptied (the solutions' code, in the student's notebook)."""
    nb = nbformat.read(path, as_version=4)
    install = [c for c in nb.cells if "d2lmini-install" in c.metadata.get("tags", [])]
    rest = [c for c in nb.cells if c not in install
            and not (c.cell_type == "code" and not c.source.strip())]
    nb.cells = install + rest
    nbformat.write(nb, path)


# ---------------------------------------------------------------------------- grading
def grade_one(autograder_zip: Path, submission: Path, workdir: Path) -> dict:
    """Run otter's autograder on one submission, here (no Docker); return otter's results:
    ``{exercise label: {"score": s, "possible": p}}`` plus ``"total"`` and ``"possible"``."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("D2LMINI_OFFLINE", "1")
    env.pop("MPLBACKEND", None)
    cmd = [*otter_command(), "run", "--no-logo", "-a", str(autograder_zip.resolve()),
           "-o", str(workdir.resolve()), str(submission.resolve())]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, check=False)
    results = workdir / "results.json"
    if proc.returncode != 0 or not results.exists():
        raise AssignError(f"{submission}: otter run failed:\n{proc.stdout[-3000:]}\n"
                          f"{proc.stderr[-3000:]}")
    data = json.loads(results.read_text(encoding="utf-8"))
    scores: dict = {}
    for t in data.get("tests", []):
        if not t.get("max_score"):  # otter's summary of the public tests, worth nothing
            continue
        scores[t["name"]] = {"score": float(t.get("score", 0)),
                             "possible": float(t.get("max_score", 0))}
    scores["total"] = sum(v["score"] for v in scores.values())
    scores["possible"] = sum(v["possible"] for k, v in scores.items() if isinstance(v, dict))
    return scores


def grade(lang: str, chapter: str, submissions: list[Path], out: Path = OUT,
          csv_path: Path | None = None) -> list[dict]:
    autograder = out / lang / chapter / "autograder" / "autograder.zip"
    if not autograder.exists():
        raise AssignError(f"{autograder}: run `python tools/assign.py make {chapter} "
                          f"--lang {lang}` first")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, sub in enumerate(submissions):
            scores = grade_one(autograder, sub, Path(tmp) / str(k))
            row = {"submission": str(sub), "total": scores.pop("total"),
                   "possible": scores.pop("possible")}
            row.update({label: v["score"] for label, v in scores.items()})
            rows.append(row)
            log(f"{sub}: {row['total']:g} / {row['possible']:g}")
    if csv_path is not None and rows:
        fields = list(dict.fromkeys(k for row in rows for k in row))
        with open(csv_path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows)
        log(f"grades written to {csv_path}")
    return rows


# ---------------------------------------------------------------------------- command line
def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in {"make", "list", "grade", "-h", "--help"}:
        argv.insert(0, "make")
    p = argparse.ArgumentParser(
        description="Graded assignments (otter-grader) from the chapters' exercises.")
    sub = p.add_subparsers(dest="cmd", required=True)
    pm = sub.add_parser("make", help="student notebook + autograder per chapter (default)")
    pm.add_argument("chapters", nargs="*", help="chapter file names (default: every chapter "
                    "with graded exercises)")
    pm.add_argument("--lang", choices=LANGS, action="append",
                    help="an edition (repeatable; default: both)")
    pm.add_argument("--out", type=Path, default=OUT, help="default: _build/assign")
    pm.add_argument("--run-tests", action="store_true",
                    help="let otter execute the solution notebook and check that its tests "
                    "pass (the book build already does this)")
    pl = sub.add_parser("list", help="the graded exercises of each chapter")
    pl.add_argument("--lang", choices=LANGS, default="en")
    pg = sub.add_parser("grade", help="grade submissions of one chapter")
    pg.add_argument("chapter")
    pg.add_argument("submissions", nargs="+", type=Path)
    pg.add_argument("--lang", choices=LANGS, required=True)
    pg.add_argument("--out", type=Path, default=OUT, help="where `make` wrote the autograder")
    pg.add_argument("--csv", type=Path, help="write the points as CSV")
    args = p.parse_args(argv)

    try:
        if args.cmd == "list":
            for chapter in graded_chapters(args.lang):
                exs = graded_exercises(args.lang, chapter)
                print(f"{chapter}: " + ", ".join(f"{ex.label} ({len(ex.tests)} tests)"
                                                 for ex in exs))
        elif args.cmd == "make":
            for lang in args.lang or LANGS:
                for chapter in args.chapters or graded_chapters(lang):
                    dest = make(lang, chapter, args.out, run_tests=args.run_tests)
                    shown = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
                    log(f"{lang}/{chapter}: {shown}/{{student,autograder}}")
        else:
            grade(args.lang, args.chapter, args.submissions, args.out, args.csv)
    except AssignError as e:
        print(f"[assign] {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
