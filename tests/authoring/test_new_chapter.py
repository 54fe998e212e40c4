"""``make chapter NAME=…`` (tools/authoring/new_chapter.py): a new chapter in both editions that
the book's checks accept as it is written, and that builds.

The scaffold is written into a copy of the repository (the files git tracks or would track), so
this checkout never holds it; there the chapter checks, the classroom's checks of the new chapter
(graded exercises, rubrics, answer leaks, the dry run of its made-up class) and a build of the
chapter in both editions run as a contributor would run them.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools.authoring import new_chapter
from tools.bookmeta import ROOT, TOC, chapter_numbers, toc_files

NAME = "scaffold-check"


def test_the_toc_gets_the_chapter_at_the_end_of_the_numbered_part():
    text = TOC.read_text(encoding="utf-8")
    added = new_chapter.add_to_toc(text, NAME)
    numbers = chapter_numbers(yaml.safe_load(added))
    assert numbers[NAME] == len(chapter_numbers()) + 1
    assert added.replace(f"      - file: {NAME}\n", "") == text  # one line, comments kept


@pytest.mark.parametrize("name, message", [("Bad_Name", "kebab-case"), ("", "kebab-case"),
                                           ("mha-numpy", "already in _toc.yml")])
def test_a_name_that_cannot_be_a_new_chapter_is_refused(name, message):
    with pytest.raises(new_chapter.ChapterError, match=message):
        new_chapter.check_name(name)


def _copy_of_the_repository(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    if (ROOT / "node_modules").is_dir():  # the front-end assets a build copies into the site
        (dest / "node_modules").symlink_to(ROOT / "node_modules")
    return dest


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("D2LMINI_") and k not in ("BOOK_TIMES_LOG", "PYTHONPATH")}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900, check=False)


@pytest.mark.book
def test_the_scaffold_passes_the_checks_and_builds_in_both_editions(tmp_path):
    copy = _copy_of_the_repository(tmp_path / "repo")
    made = _run(["-m", "tools.authoring.new_chapter", NAME, "--title", "A scaffold",
                 "--title-zh", "一个脚手架"], copy)
    assert made.returncode == 0, made.stderr
    assert NAME in toc_files(copy / "_toc.yml") and NAME not in toc_files()
    for lang in ("zh", "en"):
        assert (copy / "book" / lang / f"{NAME}.md").is_file()
    assert (copy / "tools" / "classroom" / "cases" / f"{NAME}.yml").is_file()
    checks = _run(["-m", "pytest", "-v", "-p", "no:cacheprovider", "tests/chapters",
                   "tests/classroom", "-k", f"{NAME} or test_every_graded_exercise_has_a_mistake"
                   " or test_test_cells_are_hidden_and_inside_solutions"], copy)
    assert checks.returncode == 0, checks.stdout[-4000:]
    for lang in ("zh", "en"):  # the made-up class of the new chapter was graded
        assert f"test_the_solution_gets_full_marks[{lang}-{NAME}] PASSED" in checks.stdout
    built = _run(["-m", "tools.build.build_book", "--only", NAME, "-q"], copy)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    for lang in ("zh", "en"):
        page = (copy / "_build" / "only" / lang / f"{NAME}.html").read_text(encoding="utf-8")
        assert 'id="sec-' + NAME + '-exercises"' in page
