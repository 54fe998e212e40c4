#!/usr/bin/env python
"""Export every chapter of both editions to Jupyter notebooks (.ipynb) for Colab/Binder/download.

    python -m tools.classroom.export_notebooks [--out _build/notebooks] [--lang zh en]

Writes, for each edition and page,

* ``<out>/<lang>/<name>.ipynb``: the reader's notebook, with the exercises' solutions (prose
  solutions as collapsible blocks);
* ``<out>/<lang>/student/<name>.ipynb``: the student's notebook, every solution removed; an
  exercise with autograder tests gets an answer cell naming what the tests check
  (``tools/classroom/assign.py`` makes the graded version with otter-grader).

Both have no outputs, a python3 kernel, Colab metadata, and a first cell that sets the edition's
language (``D2LMINI_LANG``) and installs ``d2lmini`` from the book's repository when it is not
importable (and, in Colab, the few requirements Colab lacks). Exercises and solutions, MyST
directives in the sources, become plain Markdown; in the zh edition the source's line breaks
between two Chinese characters are joined (Jupyter renders them as spaces).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from tools.classroom import exercises
from tools.bookmeta import LANGS, ROOT, load_yaml

# Packages the chapters need that Google Colab does not preinstall.
COLAB_EXTRA = ["gensim", "jieba", "jupytext", "myst-nb"]


def repository_url(config: Path = ROOT / "_config.yml") -> str:
    """``repository.url`` of the Jupyter Book config: the one setting that names the repository
    (launch buttons, the notebooks' install cell, the edit and issue buttons; CITATION.cff must
    agree, tests/classroom/test_export.py checks it).

    Raises:
        ValueError: the config has no ``repository.url``.
    """
    data = load_yaml(config) if config.exists() else {}
    url = (data.get("repository") or {}).get("url")
    if not url:
        raise ValueError(f"{config.name}: set repository.url to the book's GitHub repository "
                         "(https://github.com/<owner>/<name>); the launch buttons and the "
                         "notebooks' install cell use it")
    return str(url).rstrip("/")


def install_source(repo_url: str, lang: str, extra: tuple[tuple[str, str], ...] = ()) -> str:
    """The notebook's first cell: the edition's language, then ``d2lmini`` (and, in Colab, the
    packages Colab lacks); ``extra``: more ``(module, pip requirement)`` to install when the
    module is missing."""
    pkgs = " ".join(COLAB_EXTRA)
    lines = [
        "# Installs d2lmini (and, in Colab, missing requirements) only when needed.",
        "import os",
        "import sys",
        "",
        f'os.environ.setdefault("D2LMINI_LANG", "{lang}")  # the edition (plot labels)',
        "try:",
        "    import d2lmini  # noqa: F401",
        "except ImportError:",
        "    if 'google.colab' in sys.modules:",
        f"        %pip install -q {pkgs}",
        # D2LMINI_INSTALL_SPEC (a pip URL or path, e.g. a wheel) replaces the repository:
        # this is how the tests run this cell offline
        f'    d2lmini_spec = os.environ.get("D2LMINI_INSTALL_SPEC", "git+{repo_url}")',
        '    %pip install -q "d2lmini @ {d2lmini_spec}"',
    ]
    for module, requirement in extra:
        lines += ["try:", f"    import {module}  # noqa: F401", "except ImportError:",
                  f'    %pip install -q "{requirement}"']
    return "\n".join(lines)


def notebook(cells: list, src: Path, lang: str, repo_url: str, *,
             extra: tuple[tuple[str, str], ...] = (),
             name: str | None = None) -> nbformat.NotebookNode:
    """A notebook of ``cells`` with the install cell first and the book's metadata."""
    install = nbformat.v4.new_code_cell(install_source(repo_url, lang, extra))
    install.metadata["tags"] = ["d2lmini-install"]
    nb = nbformat.v4.new_notebook(cells=[install, *cells])
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["colab"] = {"name": name or f"{lang}-{src.stem}.ipynb", "provenance": []}
    nb.nbformat, nb.nbformat_minor = 4, 5
    nbformat.validator.normalize(nb)
    return nb


def write(nb: nbformat.NotebookNode, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


def export_chapter(src: Path, out: Path, lang: str, repo_url: str) -> list[Path]:
    """Write the reader's notebook of the page ``src`` and, when it has exercises, the student's;
    return their paths."""
    _, segments = exercises.read_chapter(src)
    prefix, first = exercises.numbering(src)
    full = notebook(exercises.full_cells(segments, lang, first, prefix), src, lang, repo_url)
    written = [write(full, out / lang / f"{src.stem}.ipynb")]
    if exercises.exercises(segments):
        student = notebook(exercises.student_cells(segments, lang, first, prefix), src, lang,
                           repo_url, name=f"{lang}-{src.stem}-student.ipynb")
        written.append(write(student, out / lang / "student" / f"{src.stem}.ipynb"))
    return written


def export_all(out: Path, langs=LANGS, repo_url: str | None = None) -> list[Path]:
    repo_url = repo_url or repository_url()
    written = []
    for lang in langs:
        for src in sorted((ROOT / "book" / lang).glob("*.md")):
            written += export_chapter(src, out, lang, repo_url)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "_build" / "notebooks")
    ap.add_argument("--lang", nargs="+", default=list(LANGS), choices=LANGS)
    ap.add_argument("--repo-url", default=None, help="default: repository.url in _config.yml")
    args = ap.parse_args(argv)
    paths = export_all(args.out, args.lang, args.repo_url)
    for p in paths:
        print(p)
    print(f"{len(paths)} notebooks written to {args.out}", file=sys.stderr)
    return 0 if paths else 1


if __name__ == "__main__":
    sys.exit(main())
