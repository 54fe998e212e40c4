#!/usr/bin/env python
"""Build the book: both editions (中文 and English), every chapter executed.

    python tools/build_book.py                 # both editions -> _build/html/{zh,en}/ + root chooser
    python tools/build_book.py --lang zh       # one edition
    python tools/build_book.py --only mha-numpy [--lang en]   # one chapter, quick (authors)
    python tools/build_book.py --student       # student edition, solutions removed -> _build/student/

One ``_config.yml`` and one ``_toc.yml`` at the repository root serve both editions; the file
names in ``_toc.yml`` are relative to ``book/<lang>/``. For each edition this script turns
``_config.yml`` into a Sphinx configuration with jupyter-book's own converter, adds the
per-edition settings (language, Chinese search with jieba, output and cache folders, launch
buttons, language switcher), writes it as ``_build/.conf/<variant>/<lang>/conf.py`` and runs
``sphinx-build -W --keep-going`` on ``book/<lang>``.

Chapters are executed by myst-nb in ``cache`` mode (jupyter-cache in
``_build/.jupyter_cache/<lang>``): a rebuild without code changes executes nothing. A failing
cell fails the build. MathJax is served from the site itself (npm package ``mathjax@3``, installed
by ``npm ci`` or, when missing, by this script into ``node_modules``), so formulas render offline.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
LANGS = ("zh", "en")
EXT_DIR = ROOT / "tools" / "_sphinx_ext"
SPHINX_LANGUAGE = {"zh": "zh_CN", "en": "en"}
TITLES = {"zh": "可执行的 Transformer", "en": "The Transformer, executable"}
# interface strings of extensions that Sphinx's own translations do not cover
UI_STRINGS = {
    "zh": {
        "togglebutton_hint": "点击展开",
        "togglebutton_hint_hide": "点击收起",
        "nb_code_prompt_show": "显示代码",
        "nb_code_prompt_hide": "隐藏代码",
    },
    "en": {
        "togglebutton_hint": "Click to show",
        "togglebutton_hint_hide": "Click to hide",
        "nb_code_prompt_show": "Show code cell {type}",
        "nb_code_prompt_hide": "Hide code cell {type}",
    },
}
MATHJAX_PARTS = (  # what tex-mml-chtml.js loads at run time (no speech engine, no SVG output)
    "tex-mml-chtml.js",
    "output/chtml",
    "input/tex/extensions",
    "input/mml",
    "ui",
    "a11y",
    "adaptors",
)


def log(msg: str) -> None:
    print(f"[build_book] {msg}", flush=True)


# ---------------------------------------------------------------------------- MathJax (offline)
def ensure_mathjax() -> Path:
    """Return a folder ``<dir>/mathjax/`` (a trimmed copy of mathjax@3's es5 build)."""
    es5 = ROOT / "node_modules" / "mathjax" / "es5"
    if not (es5 / "tex-mml-chtml.js").exists():
        npm = shutil.which("npm")
        if npm is None:
            sys.exit(
                "MathJax is missing: run `npm ci` (Node.js/npm needed) so that formulas render "
                "offline; the build serves MathJax from the site, never from a CDN."
            )
        log("installing MathJax from npm (npm ci) ...")
        cmd = [npm, "ci", "--no-audit", "--no-fund"]
        if not (ROOT / "package-lock.json").exists():
            cmd = [npm, "install", "--no-audit", "--no-fund"]
        subprocess.run(cmd, cwd=ROOT, check=True)
    dest_root = BUILD / ".assets"
    dest = dest_root / "mathjax"
    stamp = dest / ".version"
    version = json.loads((es5.parent / "package.json").read_text())["version"]
    if stamp.exists() and stamp.read_text() == version:
        return dest_root
    shutil.rmtree(dest, ignore_errors=True)
    for part in MATHJAX_PARTS:
        src = es5 / part
        if src.is_dir():
            shutil.copytree(src, dest / part)
        elif src.exists():
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / part)
    stamp.write_text(version)
    return dest_root


# ---------------------------------------------------------------------------- configuration
def load_yaml(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def toc_files(toc: dict) -> list[str]:
    """All file names in a jb-book _toc.yml, root first."""
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))
            walk(entry.get("parts"))

    walk(toc.get("parts"))
    walk(toc.get("chapters"))
    return names


def sphinx_config(lang: str, *, student: bool, toc_path: Path, outdir: Path, strict: bool) -> dict:
    from jupyter_book.config import get_final_config

    srcdir = ROOT / "book" / lang
    user = load_yaml(ROOT / "_config.yml")
    repo = user.get("repository", {})
    nb_branch = repo.pop("notebooks_branch", "notebooks")
    user["repository"] = repo
    cfg, _ = get_final_config(user_yaml=user, cli_config={"latex_individualpages": False}, sourcedir=srcdir, validate=True)

    # Live code in the page (thebe) is not offered: launch buttons open Colab/Binder instead, and
    # sphinx-thebe inserts its CDN script twice per page (a JavaScript error) under Sphinx 7.
    cfg["extensions"] = [e for e in cfg["extensions"] if e != "sphinx_thebe"]
    theme = dict(cfg.get("html_theme_options", {}))
    theme.update(
        {
            # launch buttons open <lang>/<page>.ipynb in the notebooks branch (book_i18n fixes
            # the suffix .md -> .ipynb)
            "repository_branch": nb_branch,
            "path_to_docs": lang,
            "article_header_end": ["lang-switcher.html", "article-header-buttons.html"],
        }
    )
    static = [str(ROOT / "_static"), str(ensure_mathjax())]
    # _config.yml gives .bib paths relative to the edition folder; the generated conf.py lives
    # elsewhere and sphinxcontrib-bibtex resolves relative paths against the conf dir
    bibfiles = [str((srcdir / b).resolve()) for b in cfg.get("bibtex_bibfiles", [])]
    cfg.update(
        {
            "project": TITLES[lang],
            "html_title": TITLES[lang],
            "language": SPHINX_LANGUAGE[lang],
            "html_search_language": "zh" if lang == "zh" else "en",
            "html_theme_options": theme,
            "html_static_path": static,
            "html_css_files": ["book.css"],
            "html_js_files": ["book.js"],
            "mathjax_path": "mathjax/tex-mml-chtml.js",
            "bibtex_bibfiles": bibfiles,
            "external_toc_path": str(toc_path),
            "external_toc_exclude_missing": True,
            "nb_execution_cache_path": str(BUILD / ".jupyter_cache" / lang),
            "nb_execution_mode": cfg.get("nb_execution_mode", "cache"),
            "book_lang": lang,
            "book_langs": list(LANGS),
            "book_notebooks_branch": nb_branch,
            "hide_solutions": bool(student),
        }
    )
    cfg.update(UI_STRINGS[lang])
    site = (user.get("html", {}) or {}).get("baseurl", "") or ""
    cfg["book_site_root"] = site.rstrip("/")
    cfg["html_baseurl"] = f"{site.rstrip('/')}/{lang}/" if site else ""
    cfg.setdefault("exclude_patterns", [])
    if not strict:
        # single-chapter builds: references into chapters not built are expected
        cfg["suppress_warnings"] = list(cfg.get("suppress_warnings", [])) + ["ref", "bibtex"]
    return cfg


def write_conf(conf_dir: Path, cfg: dict) -> None:
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "config.json").write_text(json.dumps(cfg, indent=1, default=str, ensure_ascii=False))
    (conf_dir / "conf.py").write_text(
        "# Generated by tools/build_book.py from _config.yml -- do not edit.\n"
        "import json, sys\n"
        f"sys.path.insert(0, {str(EXT_DIR)!r})\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "globals().update(json.load(open(__file__[:-7] + 'config.json', encoding='utf-8')))\n"
    )


# ---------------------------------------------------------------------------- build
def build_edition(lang: str, args, toc: dict) -> float:
    variant = "student" if args.student else ("only" if args.only else "html")
    out_root = BUILD / variant
    outdir = out_root / lang
    conf_dir = BUILD / ".conf" / variant / lang
    conf_dir.mkdir(parents=True, exist_ok=True)
    if args.only:
        names = set(toc_files(toc))
        if args.only not in names:
            sys.exit(f"--only {args.only!r}: not in _toc.yml (one of: {', '.join(sorted(names))})")
        toc_path = conf_dir / "_toc.yml"
        toc_path.write_text(yaml.safe_dump({"format": "jb-book", "root": args.only}))
    else:
        toc_path = Path(args.toc).resolve()
        missing = [n for n in toc_files(toc) if not any((ROOT / "book" / lang).glob(n + ".*"))]
        if missing:
            sys.exit(f"book/{lang}: files listed in _toc.yml are missing: {', '.join(missing)}")
    strict = not args.only and Path(args.toc).resolve() == (ROOT / "_toc.yml")
    cfg = sphinx_config(lang, student=args.student, toc_path=toc_path, outdir=outdir, strict=strict)
    write_conf(conf_dir, cfg)
    cmd = [
        sys.executable, "-m", "sphinx", "-b", "html",
        "-c", str(conf_dir),
        "-d", str(BUILD / ".doctrees" / variant / lang),
        str(ROOT / "book" / lang), str(outdir),
    ]
    if strict:
        cmd[3:3] = ["-W", "--keep-going"]
    if args.quiet:
        cmd.append("-q")
    if args.fresh:
        cmd.append("-E")
    env = dict(os.environ)
    # A kernel started with MPLBACKEND set (CI sets Agg for the tests) keeps that backend and
    # never shows a figure; without it, ipykernel selects the inline backend, whose figures
    # become the page's images. Sphinx itself draws nothing.
    env.pop("MPLBACKEND", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    log(f"{lang}: {' '.join(cmd[2:])}")
    t0 = time.perf_counter()
    rc = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
    dt = time.perf_counter() - t0
    if rc != 0:
        sys.exit(f"[build_book] {lang}: sphinx-build failed (exit {rc}) after {dt:.0f} s")
    log(f"{lang}: built in {dt:.0f} s -> {outdir.relative_to(ROOT)}/index.html")
    return dt


ROOT_INDEX = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title_zh} · {title_en}</title>
<link rel="alternate" hreflang="zh-CN" href="zh/index.html">
<link rel="alternate" hreflang="en" href="en/index.html">
<link rel="alternate" hreflang="x-default" href="en/index.html">
<style>
 body {{ font-family: system-ui, "Noto Sans CJK SC", "PingFang SC", sans-serif; max-width: 40rem;
        margin: 12vh auto; padding: 0 1rem; text-align: center; color: #222; }}
 h1 {{ font-size: 1.6rem; font-weight: 600; }}
 .choices {{ display: flex; gap: 1rem; justify-content: center; margin-top: 2rem; }}
 .choices a {{ display: block; padding: 1rem 1.6rem; border: 2px solid #bbb; border-radius: .5rem;
              text-decoration: none; color: inherit; font-size: 1.2rem; }}
 .choices a.preferred {{ border-color: #0a5fb4; background: #eef5fc; }}
 .choices a small {{ display: block; color: #555; font-size: .85rem; margin-top: .3rem; }}
 p.note {{ color: #666; font-size: .9rem; margin-top: 2rem; }}
</style>
</head>
<body>
<h1>{title_zh}<br>{title_en}</h1>
<div class="choices" id="choices">
  <a id="choose-zh" href="zh/index.html" hreflang="zh-CN" lang="zh-CN" data-lang="zh">中文版<small>简体中文</small></a>
  <a id="choose-en" href="en/index.html" hreflang="en" lang="en" data-lang="en">English edition<small>English</small></a>
</div>
<p class="note" id="note">选择语言 · Choose a language</p>
<script>
(function () {{
  var langs = navigator.languages || [navigator.language || "en"];
  var pref = "en";
  for (var i = 0; i < langs.length; i++) {{
    var l = (langs[i] || "").toLowerCase();
    if (l.indexOf("zh") === 0) {{ pref = "zh"; break; }}
    if (l.indexOf("en") === 0) {{ pref = "en"; break; }}
  }}
  try {{ var saved = localStorage.getItem("book-lang"); if (saved === "zh" || saved === "en") pref = saved; }} catch (err) {{}}
  var a = document.getElementById("choose-" + pref);
  a.classList.add("preferred");
  a.parentNode.insertBefore(a, a.parentNode.firstChild);
  document.getElementById("note").textContent = pref === "zh"
    ? "根据浏览器语言推荐中文版 · Suggested from your browser's language"
    : "Suggested from your browser's language · 根据浏览器语言推荐";
  document.getElementById("choices").addEventListener("click", function (e) {{
    var t = e.target.closest("a");
    if (t) {{ try {{ localStorage.setItem("book-lang", t.dataset.lang); }} catch (err) {{}} }}
  }});
}})();
</script>
</body>
</html>
"""


def write_root_index(out_root: Path) -> None:
    out_root.mkdir(parents=True, exist_ok=True)
    (out_root / "index.html").write_text(
        ROOT_INDEX.format(title_zh=TITLES["zh"], title_en=TITLES["en"]), encoding="utf-8"
    )
    (out_root / ".nojekyll").write_text("")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Build both editions of the book (zh, en) into _build/html/.",
        epilog="Examples: `--only mha-numpy --lang zh` builds one chapter into _build/only/zh/ "
        "(quick, not strict); `--student` builds the edition without solutions into _build/student/.",
    )
    p.add_argument("--lang", choices=LANGS, help="build one edition only (default: both)")
    p.add_argument("--only", metavar="NAME", help="build a single chapter (file name without .md) into _build/only/<lang>/")
    p.add_argument("--student", action="store_true", help="student edition: exercise solutions removed, into _build/student/")
    p.add_argument("--toc", default=str(ROOT / "_toc.yml"), help=argparse.SUPPRESS)  # testing the machinery with a partial toc
    p.add_argument("--fresh", action="store_true", help="re-read every page (sphinx -E); executed outputs still come from the cache")
    p.add_argument("-q", "--quiet", action="store_true", help="less output from Sphinx")
    args = p.parse_args(argv)

    toc = load_yaml(Path(args.toc))
    langs = [args.lang] if args.lang else list(LANGS)
    t0 = time.perf_counter()
    times = {lang: build_edition(lang, args, toc) for lang in langs}
    variant = "student" if args.student else ("only" if args.only else "html")
    write_root_index(BUILD / variant)
    total = time.perf_counter() - t0
    log(", ".join(f"{k}: {v:.0f} s" for k, v in times.items()) + f"; total {total:.0f} s")
    log(f"open {(BUILD / variant / 'index.html').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
