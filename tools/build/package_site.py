#!/usr/bin/env python
"""The offline copy of the book: the built site (both editions, MathJax included) as one zip.

    python -m tools.build.package_site  # _build/html -> _build/transformer-book-html.zip (+ a
                                        # copy in the site, which the landing page links to)

``tools/build/build_book.py`` calls it at the end of a full build and ``tools/build/build_pdf.py``
after it copied the PDFs into the site. The zip holds one folder, ``transformer-book-html/``; a
reader unzips it and opens ``transformer-book-html/index.html``: every page, formula (MathJax is
served from the site), figure and the search work from the disk, without a network.
"""
from __future__ import annotations

import os
import shutil
import sys
import zipfile
from pathlib import Path

from tools.bookmeta import ROOT

SITE = ROOT / "_build" / "html"
ZIP_PATH = ROOT / "_build" / "transformer-book-html.zip"
FOLDER = "transformer-book-html"
# Sphinx's build bookkeeping and myst-nb's executed notebooks are not part of the site
SKIP_NAMES = {".buildinfo", ".nojekyll", ZIP_PATH.name}
SKIP_DIRS = {".doctrees", "jupyter_execute"}
#: left out of every edition's ``_static``, because a page read from ``file://`` cannot use them:
#: Pyodide (book_sphinx.browser), which cannot start from there and whose cells' packages come
#: from its CDN (the offline pages say so), and ONNX Runtime Web's WebAssembly and glue module as
#: files, which only a page served over HTTP loads (from disk the translator loads them as the
#: classic scripts ort-wasm.js and ort-glue.js beside them; tools/build/build_book.py's pack_ort)
SKIP_STATIC = {"pyodide", "ort/ort-wasm-simd-threaded.wasm", "ort/ort-wasm-simd-threaded.mjs"}


def _in_static(path: Path, site: Path) -> str | None:
    """``path`` relative to the ``_static`` folder of its edition, or None outside one."""
    parts = path.relative_to(site).parts
    return "/".join(parts[parts.index("_static") + 1:]) if "_static" in parts else None


def site_files(site: Path = SITE) -> list[Path]:
    """The files of the site that go into the zip, sorted (same site, same zip)."""
    files = []
    for dirpath, dirnames, filenames in os.walk(site):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames
                             if not (here == site and d in SKIP_DIRS)
                             and _in_static(here / d, site) not in SKIP_STATIC)
        files += [here / f for f in sorted(filenames)
                  if f not in SKIP_NAMES and _in_static(here / f, site) not in SKIP_STATIC]
    return files


def write_zip(site: Path = SITE, dest: Path = ZIP_PATH) -> Path:
    """Write ``dest`` from the site folder ``site``; return ``dest``."""
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"{site}/index.html: build the site first "
                                "(python -m tools.build.build_book)")
    tmp = dest.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for path in site_files(site):
            arc = f"{FOLDER}/{path.relative_to(site).as_posix()}"
            info = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            # already-compressed files are stored as they are
            if path.suffix in {".png", ".jpg", ".jpeg", ".pdf", ".woff", ".woff2", ".zip"}:
                info.compress_type = zipfile.ZIP_STORED
            zf.writestr(info, path.read_bytes())
    tmp.replace(dest)
    return dest


def build_offline_copy(site: Path = SITE) -> Path:
    """``transformer-book-html.zip`` next to the site (``_build/`` for ``_build/html``; the
    build directory of any other build), and a copy of it inside the site (the landing page
    links to it there)."""
    dest = write_zip(site, site.parent / ZIP_PATH.name)
    shutil.copyfile(dest, site / ZIP_PATH.name)
    return dest


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--site", type=Path, default=SITE, help="the built site (default: _build/html)")
    p.add_argument("--out", type=Path, default=ZIP_PATH, help="the zip to write")
    args = p.parse_args(argv)
    try:
        out = (build_offline_copy(args.site) if args.out == ZIP_PATH
               else write_zip(args.site, args.out))
    except FileNotFoundError as e:
        print(f"[package_site] {e}", file=sys.stderr)
        return 1
    print(f"[package_site] {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: "
          f"{out.stat().st_size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
