#!/usr/bin/env python
"""Export every chapter of both editions to a Jupyter notebook (.ipynb) for Colab/Binder/download.

    python tools/export_notebooks.py [--out _build/notebooks] [--lang zh en]

Writes ``<out>/<lang>/<name>.ipynb`` with no outputs, solutions included, a python3 kernel, Colab
metadata, and a first cell that installs ``d2lmini`` from the book's repository when it is not
importable (and, in Colab, the few requirements Colab lacks).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bookmeta import LANGS, ROOT  # noqa: E402

DEFAULT_REPO = "https://github.com/transformer-book/transformer-book"
# Packages the chapters need that Google Colab does not preinstall.
COLAB_EXTRA = ["gensim", "jieba", "jupytext", "myst-nb"]


def repository_url(config: Path = ROOT / "_config.yml") -> str:
    """``repository.url`` from the Jupyter Book config, or the default."""
    if config.exists():
        import yaml

        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        url = (data.get("repository") or {}).get("url")
        if url:
            return str(url).rstrip("/")
    return DEFAULT_REPO


def install_source(repo_url: str) -> str:
    """The first cell of every exported notebook: install d2lmini when it is not importable.

    The package comes from the book's repository; ``D2LMINI_INSTALL_SPEC`` (a pip URL or path,
    e.g. a wheel) replaces that source, which is how the tests run this cell offline."""
    extra = " ".join(COLAB_EXTRA)
    return (
        "# Installs d2lmini (and, in Colab, missing requirements) only when needed.\n"
        "import os\n"
        "import sys\n"
        "try:\n"
        "    import d2lmini  # noqa: F401\n"
        "except ImportError:\n"
        "    if 'google.colab' in sys.modules:\n"
        f"        %pip install -q {extra}\n"
        f'    d2lmini_spec = os.environ.get("D2LMINI_INSTALL_SPEC", "git+{repo_url}")\n'
        '    %pip install -q "d2lmini @ {d2lmini_spec}"'
    )


def export_chapter(src: Path, dest: Path, lang: str, repo_url: str) -> Path:
    nb = jupytext.read(src, fmt="md:myst")
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    install = nbformat.v4.new_code_cell(install_source(repo_url))
    install.metadata["tags"] = ["d2lmini-install"]
    nb.cells.insert(0, install)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["colab"] = {"name": f"{lang}-{src.stem}.ipynb", "provenance": []}
    nb.nbformat, nb.nbformat_minor = 4, 5
    for cell in nb.cells:
        cell.setdefault("id", None)
    nb = nbformat.from_dict(nb)
    nbformat.validator.normalize(nb)
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    return dest


def export_all(out: Path, langs=LANGS, repo_url: str | None = None) -> list[Path]:
    repo_url = repo_url or repository_url()
    written = []
    for lang in langs:
        for src in sorted((ROOT / "book" / lang).glob("*.md")):
            written.append(export_chapter(src, out / lang / f"{src.stem}.ipynb", lang, repo_url))
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
