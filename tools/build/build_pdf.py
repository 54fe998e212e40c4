#!/usr/bin/env python
"""Build the PDF of each edition (中文 and English), with and without the exercises' solutions.

    python -m tools.build.build_pdf                 # both editions, full and student -> _build/pdf/
    python -m tools.build.build_pdf --lang zh       # one edition
    python -m tools.build.build_pdf --variant full  # only the PDFs with solutions (or: student)
    python -m tools.build.build_pdf -j 1            # one build at a time (default: one per core)

Writes ``_build/pdf/transformer-book-<lang>.pdf`` (exercises followed by their solutions at the
end of each chapter) and ``_build/pdf/transformer-book-<lang>-student.pdf`` (exercises without
solutions, as the student HTML edition). When the HTML site exists the PDFs are copied into it
(``_build/html/pdf/``, ``_build/student/pdf/``), where the "PDF" button of every page points,
and the offline copy ``_build/transformer-book-html.zip`` is written again.

Same configuration as the HTML (``_config.yml`` through ``build_book.sphinx_config``) and the
same jupyter cache (``build_book.jupyter_cache_dir``): after an HTML build nothing is executed.
Sphinx's LaTeX builder writes ``_build/latex/<lang>/<variant>/``; ``latexmk`` runs xelatex
there. The zh edition sets Chinese in Noto Serif/Sans CJK SC through xeCJK, with Chinese chapter
headings (第 N 章, 附录 A) and captions (图, 表); both editions set code in DejaVu Sans Mono (box
drawing characters) with Noto Sans Mono CJK SC for Chinese in code and outputs. SVG figures and
plots are printed to PDF by Chromium (``book_sphinx.latex``).

Needs: the system packages of ``tools/setup/dev.py`` (``SYSTEM_PACKAGES``; ``make system`` installs
them as root: xelatex, latexmk, the TeX packages, the Noto CJK, DejaVu and TeX Gyre fonts,
chromium) and the Python packages of requirements.txt. A latexmk run that failed leaves a marker
(``.failed-<variant>``), and the next build starts from a clean LaTeX folder instead of replaying
the failure.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools.build import build_book
from tools.build.book_sphinx.reader import show_pdf_buttons
from tools import ci_times
from tools.bookmeta import AUTHORS, LANGS, ROOT, TITLES, load_yaml, pdf_name, toc_files

BUILD = ROOT / "_build"  # the default; --build-dir changes it, as for tools/build/build_book.py
VARIANTS = ("full", "student")
AUTHOR = AUTHORS


class PdfError(Exception):
    """A step of the PDF build failed; ``main`` prints the message and exits with status 1."""


def log(msg: str) -> None:
    print(f"[build_pdf] {msg}", flush=True)


def stem(lang: str, variant: str = "full") -> str:
    """``transformer-book-<lang>[-student]``: the name of the PDF and of its .tex file."""
    return pdf_name(lang, student=variant == "student").removesuffix(".pdf")


def pdf_path(lang: str, variant: str = "full", build: Path = BUILD) -> Path:
    return build / "pdf" / pdf_name(lang, student=variant == "student")


# ---------------------------------------------------------------------------- LaTeX settings
FONTS = r"""
\setmainfont{texgyretermes}[Extension=.otf, UprightFont=*-regular, ItalicFont=*-italic,
  BoldFont=*-bold, BoldItalicFont=*-bolditalic]
\setsansfont{texgyreheros}[Extension=.otf, UprightFont=*-regular, ItalicFont=*-italic,
  BoldFont=*-bold, BoldItalicFont=*-bolditalic]
\setmonofont{DejaVuSansMono}[Extension=.ttf, UprightFont=*, ItalicFont=*-Oblique,
  BoldFont=*-Bold, BoldItalicFont=*-BoldOblique, Scale=MatchLowercase]
% Noto CJK comes as collections (.ttc); face 2 is Simplified Chinese (SC), 7 its monospace
\usepackage{xeCJK}
\setCJKmainfont{NotoSerifCJK-Regular.ttc}[FontIndex=2, BoldFont=NotoSansCJK-Bold.ttc,
  BoldFeatures={FontIndex=2}]
\setCJKsansfont{NotoSansCJK-Regular.ttc}[FontIndex=2, BoldFont=NotoSansCJK-Bold.ttc,
  BoldFeatures={FontIndex=2}]
\setCJKmonofont{NotoSansCJK-Regular.ttc}[FontIndex=7]
% symbols the text fonts lack: the execution report's status emoji as a check mark
\newfontfamily\booksymbolfont{DejaVuSans.ttf}
\usepackage{newunicodechar}
\newunicodechar{✅}{{\booksymbolfont ✔}}
"""

PREAMBLE = r"""
% chapter headings: a label line (Chapter 1, 第 1 章, Appendix A, 附录 A) above the title
\titleformat{\chapter}[display]{\normalfont\sffamily\bfseries\huge}{\bookchaplabel}{10pt}{\Huge}
\titlespacing*{\chapter}{0pt}{0pt}{28pt}
\newcommand{\bookchaplabel}{\chaptertitlename\ \thechapter}
% preface: unnumbered, its figures numbered 1, 2, ...; then chapters 1, 2, ... (figures 1.1, ...)
\newcommand{\bookfrontmatter}{\setcounter{secnumdepth}{-1}%
  \renewcommand{\thefigure}{\arabic{figure}}\renewcommand{\thetable}{\arabic{table}}}
\newcommand{\bookmainmatter}{\setcounter{secnumdepth}{1}\setcounter{figure}{0}%
  \setcounter{table}{0}\renewcommand{\thefigure}{\thechapter.\arabic{figure}}%
  \renewcommand{\thetable}{\thechapter.\arabic{table}}}
\newcommand{\bookappendix}{}
% table cells ragged right: narrow columns (Chinese, file paths, code) are not stretched letter
% by letter (Sphinx's T and \X columns are justified)
\newcolumntype{T}{L}
\makeatletter
\newcolumntype{\X}[2]{>{\raggedright\arraybackslash}p{\dimexpr
      (\linewidth-\spx@arrayrulewidth)*#1/#2-\tw@\tabcolsep-\spx@arrayrulewidth\relax}}
\makeatother
% citations (links) in figure captions: the caption also goes to the list of figures
\usepackage{etoolbox}
\AtBeginDocument{\robustify{\hyperlink}}
"""

# xeCJK sets curly quotes, dashes and the ellipsis as full-width CJK punctuation ("d2l’ s"); in
# the English edition they are Latin punctuation
PREAMBLE_EN = r"""
\xeCJKDeclareCharClass{Default}{"2013, "2014, "2018, "2019, "201C, "201D, "2026}
"""

PREAMBLE_ZH = r"""
\renewcommand{\bookchaplabel}{第\,\thechapter\,章}
\renewcommand{\bookappendix}{\renewcommand{\bookchaplabel}{附录\,\thechapter}}
\addto\captionsenglish{\renewcommand{\contentsname}{目录}\renewcommand{\bibname}{参考文献}%
  \renewcommand{\chaptername}{章}\renewcommand{\appendixname}{附录}%
  \renewcommand{\indexname}{索引}}
\makeatletter
\renewcommand{\chaptermark}[1]{\markboth{\ifnum\c@secnumdepth>\m@ne\bookchaplabel\quad\fi #1}{}}
% page references of cross-references: (第 12 页), not hyperref's English (page 12)
\AtBeginDocument{\DeclareRobustCommand*{\autopageref}{\@ifstar\bookpageref\bookpageref}}
\newcommand*{\bookpageref}[1]{第\,\pageref{#1}\,页}
\makeatother
\xeCJKsetup{CJKecglue=\hskip 0.15em plus 0.05em minus 0.05em}
\linespread{1.15}
"""


def latex_settings(lang: str, variant: str, toc_path: Path = ROOT / "_toc.yml") -> dict:
    """The LaTeX part of one edition's Sphinx configuration."""
    toc = load_yaml(toc_path)
    root = toc["root"]
    # everything after the first part of _toc.yml (the chapters) is back matter: appendices
    appendices = toc_files({"root": root, "parts": toc.get("parts", [])[1:]})[1:]
    elements = {
        "papersize": "a4paper",
        "pointsize": "10pt",
        "babel": r"\usepackage[english]{babel}",
        "polyglossia": "",
        "fontenc": r"\usepackage{fontspec}",
        "fontpkg": FONTS,
        "textgreek": "",
        "fncychap": "",
        "fvset": r"\fvset{fontsize=\small,formatcom=\xeCJKVerbAddon}",
        "preamble": PREAMBLE + (PREAMBLE_ZH if lang == "zh" else PREAMBLE_EN),
        "releasename": "",
        "makeindex": "",
        "printindex": "",
        "sphinxsetup": "verbatimwrapslines=true, verbatimforcewraps=true",
    }
    title = TITLES[lang]
    if variant == "student":
        title += "（学生版）" if lang == "zh" else " (student edition)"
    return {
        "latex_engine": "xelatex",
        "latex_documents": [(root, f"{stem(lang, variant)}.tex", title, AUTHOR[lang],
                             "manual", False)],
        "latex_toplevel_sectioning": "chapter",
        "latex_show_urls": "footnote",
        "latex_show_pagerefs": True,  # a printed cross-reference also gives the page
        "latex_domain_indices": False,
        "latex_elements": elements,
        "numfig_secnum_depth": 1,
        # SVG plots are not among myst-nb's LaTeX formats; book_sphinx.latex converts them to PDF
        "nb_mime_priority_overrides": [("latex", "image/svg+xml", 15)],
        "book_pdf_image_cache": str(BUILD / ".pdf-images"),
        "book_pdf_appendices": appendices,
    }


def pdf_config(lang: str, variant: str, assets: Path, toc_path: Path = ROOT / "_toc.yml") -> dict:
    strict = toc_path.resolve() == (ROOT / "_toc.yml").resolve()
    cfg = build_book.sphinx_config(lang, student=variant == "student", toc_path=toc_path,
                                   strict=strict, assets=assets)
    # jupyter-book's LaTeX extension sets its own class, fonts (ucharclasses, which clashes with
    # xeCJK) and parts; the book's structure comes from book_sphinx.latex instead
    cfg["extensions"] = [e for e in cfg["extensions"] if e != "sphinx_jupyterbook_latex"]
    cfg["extensions"].append("tools.build.book_sphinx.latex")
    cfg.update(latex_settings(lang, variant, toc_path))
    return cfg


# ---------------------------------------------------------------------------- build
def cache_records(path: Path) -> dict[int, tuple[str, str, str]]:
    """The records of the jupyter cache in ``path``: {id: (hash, page, time cached)}. A notebook
    executed again replaces its record (myst-nb caches with ``overwrite=True``), so comparing
    these, not their number, tells whether a build executed anything."""
    from jupyter_cache import get_cache

    if not path.exists():
        return {}
    return {r.pk: (r.hashkey, r.uri, r.created.isoformat())
            for r in get_cache(path).list_cache_records()}


def executed_pages(before: dict, after: dict) -> list[str]:
    """The pages whose record is new or was replaced between two :func:`cache_records`."""
    return sorted(Path(uri).stem for pk, (_, uri, _) in after.items()
                  if before.get(pk) != after[pk])


def other_cache_than_html(lang: str, variant: str, cache_path: Path, build: Path) -> str:
    """A warning when the HTML edition in ``build`` read another jupyter cache than
    ``cache_path`` (the code, the data or the environment changed since it was built): the PDF
    then executes its chapters again and shows other outputs (timings, the random ids of the
    figures) than the HTML beside it. Empty when they agree or no HTML was built there."""
    import json

    conf = build / ".conf" / "html" / lang / "config.json"
    if not conf.is_file():
        return ""
    html_path = Path(json.loads(conf.read_text(encoding="utf-8"))["nb_execution_cache_path"])
    if html_path == cache_path:
        return ""

    def key(path: Path) -> str:
        f = path.parent / "KEY.json"
        return f.read_text(encoding="utf-8").strip() if f.is_file() else "(no KEY.json)"
    return (f"WARNING {stem(lang, variant)}: the HTML in {build} read another jupyter cache "
            f"({html_path}) than this PDF ({cache_path}); rebuild the HTML first "
            f"(tools/build/build_book.py) for a PDF that shows what the HTML shows.\n"
            f"  HTML's key: {key(html_path)}\n  PDF's key: {key(cache_path)}")


def _run(cmd: list[str], cwd: Path, env: dict, logfile: Path, quiet: bool) -> int:
    """Run ``cmd`` with its output in ``logfile``; print the log (its end on failure)."""
    logfile.parent.mkdir(parents=True, exist_ok=True)
    with open(logfile, "w", encoding="utf-8") as f:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT,
                              check=False)
    text = logfile.read_text(encoding="utf-8", errors="replace")
    if proc.returncode != 0:
        print(text[-6000:], file=sys.stderr)
    elif not quiet:
        print(text)
    return proc.returncode


def build_one(lang: str, variant: str, *, assets: Path, toc_path: Path = ROOT / "_toc.yml",
              build: Path = BUILD, quiet: bool = True) -> dict:
    """Sphinx (LaTeX builder) then latexmk for one edition and variant into ``build``; return
    timings."""
    outdir = build / "latex" / lang / variant
    conf_dir = build / ".conf" / f"pdf-{variant}" / lang
    failed = outdir.parent / f".failed-{variant}"
    if failed.exists():  # latexmk would replay the failed run ("Nothing to do ... gave an error")
        log(f"{stem(lang, variant)}: the previous build failed; starting from a clean {outdir}")
        shutil.rmtree(outdir, ignore_errors=True)
        failed.unlink()
    cfg = pdf_config(lang, variant, assets, toc_path)
    cache_path = Path(cfg["nb_execution_cache_path"])
    warning = other_cache_than_html(lang, variant, cache_path, build)
    if warning:
        log(warning)
    build_book.write_conf(conf_dir, cfg)
    env = build_book.kernel_env(dict(os.environ))  # threads that sleep while waiting
    env.pop("MPLBACKEND", None)  # as for the HTML: kernels (on a cache miss) draw inline
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env["D2LMINI_LANG"] = lang
    name = stem(lang, variant)
    before = cache_records(cache_path)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "sphinx", "-b", "latex", "-c", str(conf_dir),
           "-d", str(build / ".doctrees" / f"pdf-{variant}" / lang),
           str(ROOT / "book" / lang), str(outdir)]
    if toc_path.resolve() == (ROOT / "_toc.yml").resolve():
        cmd += ["-W", "--keep-going"]  # the whole book: every warning is an error
    log(f"{name}: sphinx-build -b latex -> {outdir}")
    if _run(cmd, ROOT, env, outdir.parent / f"sphinx-{variant}.log", quiet) != 0:
        raise PdfError(f"{name}: sphinx-build (LaTeX) failed; log: "
                       f"{outdir.parent / f'sphinx-{variant}.log'}")
    t1 = time.perf_counter()
    executed = executed_pages(before, cache_records(cache_path))
    latexmk = shutil.which("latexmk")
    if latexmk is None or shutil.which("xelatex") is None:
        raise PdfError("latexmk and xelatex are needed (Debian: apt-get install latexmk "
                       "texlive-xetex texlive-latex-extra texlive-lang-chinese "
                       "texlive-fonts-recommended fonts-noto-cjk)")
    cmd = [latexmk, "-pdfxe", "-dvi-", "-ps-", "-interaction=nonstopmode", "-halt-on-error",
           "-file-line-error", f"{name}.tex"]
    env_tex = dict(env, LATEXOPTS="")
    failed.write_text("latexmk did not finish\n")  # removed on success, read by the next run
    if _run(cmd, outdir, env_tex, outdir / "latexmk.log", quiet) != 0:
        raise PdfError(f"{name}: xelatex failed; see {outdir / f'{name}.log'} (the next run "
                       "starts from a clean LaTeX folder)")
    failed.unlink()
    t2 = time.perf_counter()
    pdf = pdf_path(lang, variant, build)
    pdf.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(outdir / f"{name}.pdf", pdf)
    log(f"{name}: sphinx {t1 - t0:.0f} s, xelatex {t2 - t1:.0f} s -> "
        f"{pdf}"
        + (f" ({len(executed)} notebooks executed, not in the jupyter cache {cache_path}: "
           f"{', '.join(executed)})" if executed else ""))
    return {"name": name, "sphinx_s": t1 - t0, "latex_s": t2 - t1, "executed": executed}


def publish(built: list[tuple[str, str]], build: Path = BUILD) -> None:
    """Copy the PDFs into the HTML sites that exist (the pages' "PDF" button points there) and
    write the offline copy of the site again."""
    sites = {"full": build / "html", "student": build / "student"}
    for lang, variant in built:
        site, pdf = sites[variant], pdf_path(lang, variant, build)
        if (site / lang).is_dir():
            (site / "pdf").mkdir(exist_ok=True)
            shutil.copyfile(pdf, site / "pdf" / pdf.name)
            show_pdf_buttons(site / lang)  # the pages rendered it hidden while it was missing
    for variant in {v for _, v in built}:  # their download lists name the PDFs now there
        if (sites[variant] / "index.html").exists():
            build_book.write_root_index(sites[variant], student=variant == "student")
    if any(v == "full" for _, v in built) and (sites["full"] / "index.html").exists():
        from tools.build import package_site

        package_site.build_offline_copy(sites["full"])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Build the PDF of each edition into _build/pdf/ (Sphinx LaTeX + xelatex).",
        epilog="The HTML build (tools/build/build_book.py) fills the jupyter cache this build "
               "reads; "
        "run it first, or this build executes the chapters itself.")
    p.add_argument("--lang", choices=LANGS, action="append",
                   help="an edition to build (repeatable; default: both)")
    p.add_argument("--variant", choices=(*VARIANTS, "all"), default="all",
                   help="full: with solutions; student: without; all (default): both")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="PDFs built at the same time (default: the number of CPU cores)")
    p.add_argument("--toc", type=Path, default=ROOT / "_toc.yml",
                   help="a table of contents other than _toc.yml (for testing the machinery)")
    p.add_argument("-v", "--verbose", action="store_true", help="print Sphinx's and LaTeX's logs")
    p.add_argument("--build-dir", type=Path, default=BUILD,
                   help="the build folder of the HTML (default _build): the PDFs go to its pdf/")
    args = p.parse_args(argv)
    build = args.build_dir.resolve()

    langs = args.lang or list(LANGS)
    variants = VARIANTS if args.variant == "all" else (args.variant,)
    jobs = [(lang, v) for v in variants for lang in langs]
    t0, start = time.perf_counter(), time.time()
    try:
        assets = build_book.ensure_assets(build)
        for lang in langs:  # the cache key, once, before the threads (see build_book._once)
            log(f"{lang}: jupyter cache {build_book.jupyter_cache_dir(lang)}")
        with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(jobs)))) as pool:
            results = list(pool.map(
                lambda job: build_one(job[0], job[1], assets=assets, toc_path=args.toc.resolve(),
                                     build=build, quiet=not args.verbose),
                jobs))
        publish(jobs, build)
    except (PdfError, build_book.BuildError) as e:
        print(f"[build_pdf] {e}", file=sys.stderr)
        return 1
    total = time.perf_counter() - t0
    ci_times.record(f"PDFs ({', '.join(stem(lang, v) for lang, v in jobs)})", start, time.time())
    log(", ".join(f"{r['name']}: {r['sphinx_s'] + r['latex_s']:.0f} s" for r in results)
        + f"; total {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
