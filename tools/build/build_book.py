#!/usr/bin/env python
"""Build the book: both editions (中文 and English), every chapter executed.

    python -m tools.build.build_book              # both editions -> _build/html/{zh,en}/ + chooser
    python -m tools.build.build_book --lang zh    # one edition
    python -m tools.build.build_book --only mha-numpy [--lang en]  # one chapter, quick (authors)
    python -m tools.build.build_book --student    # student edition, no solutions -> _build/student/

One ``_config.yml`` and one ``_toc.yml`` at the repository root serve both editions; the file
names in ``_toc.yml`` are relative to ``book/<lang>/``. For each edition this script turns
``_config.yml`` into a Sphinx configuration with jupyter-book's own converter, adds the
per-edition settings (language, Chinese search with jieba, output and cache folders, launch
buttons, language switcher), writes it as ``_build/.conf/<variant>/<lang>/conf.py`` and runs
``sphinx-build -W --keep-going`` on ``book/<lang>``. Where two cores are usable the two editions
are built side by side (``-j``): a single build leaves about half of two cores idle (Sphinx and
a notebook's Python are one thread each), each edition has its own folders (myst-nb's output
folder too, ``book_sphinx.claims``), and a model both editions train is trained once
(``book.load_or_train`` locks its key; the other edition waits and loads).

Chapters are executed by myst-nb in ``cache`` mode: a rebuild without code changes executes
nothing. myst-nb keys its cache by the code cells alone, so the cache folder,
``_build/.jupyter_cache/data-<data>-code-<code>/<lang>``, carries the rest of what changes the
outputs: ``<data>`` fingerprints the files d2lmini finds (the real files or the offline corpus),
``<code>`` the d2lmini package's files, the installed packages (the lock), the Python and the CJK
font matplotlib will use (:func:`cache_key`). Change a library function that no cell shows and
every chapter executes again. A chapter that read no data set that two builds have differently
(the published and the nothing-at-all builds) is executed once for both
(:func:`share_executions`). The kernels run with ``OMP_WAIT_POLICY=PASSIVE`` and one OpenMP
thread per usable core (:func:`kernel_env`), so that a build beside another CPU-bound process
slows down in proportion instead of collapsing; a cell may run for ``CELL_TIMEOUT`` seconds
(``D2LMINI_CELL_TIMEOUT``), far above what a machine five times slower than CI needs. A failing
cell fails the build. MathJax is served from the site itself (npm package ``mathjax@3``, installed
by ``npm ci`` or, when missing, by this script into ``node_modules``), so formulas render offline.
"""
from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import json
import os
import shutil
import string
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from tools import ci_times
from tools.bookmeta import AUTHORS, LANGS, ROOT, SPHINX_LANGUAGE, TITLES, load_yaml, toc_files

BUILD = ROOT / "_build"  # the default; --build-dir changes it (the jupyter cache stays here)
# the executed-notebook cache (D2LMINI_JUPYTER_CACHE: another folder, e.g. a test's empty one)
#: Run first by every kernel: the cell times.
KERNEL_STARTUP = Path(__file__).resolve().with_name("kernel_startup.py")
CACHE_ROOT = Path(os.environ.get("D2LMINI_JUPYTER_CACHE") or ROOT / "_build" / ".jupyter_cache")
PACKAGE = ROOT / "d2lmini"
#: seconds a cell may run (myst-nb's limit); the slowest cell on a 2-core CI machine takes a few
#: minutes, so a machine five times slower stays well inside it. D2LMINI_CELL_TIMEOUT overrides.
CELL_TIMEOUT = 3600
TEMPLATES = Path(__file__).resolve().parent / "templates"
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


class BuildError(Exception):
    """A build step failed; ``main`` prints the message and exits with status 1."""


def log(msg: str) -> None:
    print(f"[build_book] {msg}", flush=True)


# ---------------------------------------------------------------------- MathJax, Vega (offline)
#: The Vega libraries of the interactive figures (book_sphinx.vega), from their npm packages.
VEGA_FILES = ("vega/build/vega.min.js", "vega-lite/build/vega-lite.min.js",
              "vega-embed/build/vega-embed.min.js")
#: ONNX Runtime Web's CPU build (book_sphinx.translator): the library, the glue code that loads
#: its WebAssembly, and the WebAssembly itself.
ORT_DIST = "onnxruntime-web/dist"
ORT_FILES = ("ort.wasm.min.js", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
#: Pyodide's core (book_sphinx.browser): the loader, the interpreter and its WebAssembly, the
#: standard library and the lock file that names the packages (fetched from Pyodide's CDN)
PYODIDE_FILES = ("pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json", "package.json")


def pack_ort(dist: Path, dest: Path) -> None:
    """ONNX Runtime Web into ``dest``: the library, its glue module and its WebAssembly as they
    are (a page served over HTTP loads those), and the last two again as classic scripts, so that
    a page read from ``file://`` (where it may neither fetch a file nor import a module) can load
    them: ``ort-glue.js`` (the glue module's source as a string, imported from a blob URL) and
    ``ort-wasm.js`` (the WebAssembly in base64). Written only when the version changes."""
    version = json.loads((dist.parent / "package.json").read_text())["version"]
    stamp = dest / ".version"
    written = [*ORT_FILES, "ort-glue.js", "ort-wasm.js"]
    if (stamp.exists() and stamp.read_text() == version
            and all((dest / name).is_file() for name in written)):
        return
    dest.mkdir(parents=True, exist_ok=True)
    for name in ORT_FILES:
        shutil.copy2(dist / name, dest / name)
    glue = (dist / ORT_FILES[1]).read_text(encoding="utf-8")
    (dest / "ort-glue.js").write_text(f"window.D2L_ORT_GLUE = {json.dumps(glue)};\n",
                                      encoding="utf-8")
    wasm = base64.b64encode((dist / ORT_FILES[2]).read_bytes()).decode("ascii")
    (dest / "ort-wasm.js").write_text(f'window.D2L_ORT_WASM = "{wasm}";\n', encoding="ascii")
    stamp.write_text(version)


def _copy_changed(src: Path, dest: Path, files) -> None:
    """Copy each of ``files`` (paths under ``src``) into ``dest`` by its name, unless the copy
    there is already the same."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        source, target = src / f, dest / Path(f).name
        if (not target.exists() or target.stat().st_size != source.stat().st_size
                or target.read_bytes() != source.read_bytes()):
            shutil.copy2(source, target)


def _npm_packages(needed: list[Path]) -> None:
    """Install the npm packages of package.json (``npm ci``) when a file of ``needed`` is
    missing."""
    if all(path.exists() for path in needed):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError(
            "MathJax, Vega, ONNX Runtime Web or Pyodide is missing: run `npm ci` (Node.js/npm "
            "needed) so that formulas, interactive figures, chapter 6's translator and the "
            "NumPy chapters' cells in the page work; the build serves them from the site, never "
            "from a CDN."
        )
    log("installing MathJax, Vega, ONNX Runtime Web and Pyodide from npm (npm ci) ...")
    cmd = [npm, "ci", "--no-audit", "--no-fund"]
    if not (ROOT / "package-lock.json").exists():
        cmd = [npm, "install", "--no-audit", "--no-fund"]
    subprocess.run(cmd, cwd=ROOT, check=True)


def ensure_assets(build: Path = BUILD) -> Path:
    """Return a folder holding ``mathjax/`` (a trimmed copy of mathjax@3's es5 build),
    ``vega/`` (Vega, Vega-Lite, vega-embed), ``ort/`` (ONNX Runtime Web, :func:`pack_ort`) and
    ``pyodide/`` (Pyodide's core, :data:`PYODIDE_FILES`) under ``build``, installing the npm
    packages first when they are missing."""
    modules = ROOT / "node_modules"
    es5 = modules / "mathjax" / "es5"
    _npm_packages([es5 / "tex-mml-chtml.js"] + [modules / f for f in VEGA_FILES]
                  + [modules / ORT_DIST / f for f in ORT_FILES]
                  + [modules / "pyodide" / f for f in PYODIDE_FILES])
    dest_root = build / ".assets"
    pack_ort(modules / ORT_DIST, dest_root / "ort")
    _copy_changed(modules / "pyodide", dest_root / "pyodide", PYODIDE_FILES)
    _copy_changed(modules, dest_root / "vega", VEGA_FILES)
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
# The cache key is computed once per process, under a lock: tools/build/build_pdf.py builds editions
# in threads, and two threads computing it at once (find_cjk_font registering a font file while
# the other lists them) could give two keys, so one edition would read an empty cache folder
# and execute its chapters again.
_KEY_LOCK = threading.RLock()


def _once(fn):
    """``functools.cache`` for a function of no arguments, safe when threads call it first."""
    cached = functools.cache(fn)

    @functools.wraps(fn)
    def wrapper():
        with _KEY_LOCK:
            return cached()
    wrapper.cache_clear = cached.cache_clear
    return wrapper


@_once
def dataset_digests() -> dict[str, str]:
    """What each data set the chapters may read is in this build: ``{name: "<kind>:<sha256>"}``.

    Asks d2lmini where each data set is (local directory, cache, a download now, or the offline
    corpus, built here if it is built) in the environment the kernels inherit, and hashes the
    file, or the offline corpus (it is generated deterministically)."""
    import d2lmini as d2l

    digests = {}
    for name in d2l.DATASETS:
        source, h = d2l.resolve(name), hashlib.sha256()
        if source.path is not None:
            with open(source.path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 22), b""):
                    h.update(chunk)
        else:
            h.update(source.read_text().encode())
        digests[name] = f"{source.kind}:{h.hexdigest()}"
    return digests


@_once
def data_fingerprint() -> tuple[str, dict[str, str]]:
    """A short hash of the data the chapters will read (:func:`dataset_digests`), and the kind
    of each data set's source."""
    digests = dataset_digests()
    h = hashlib.sha256(json.dumps(digests, sort_keys=True).encode())
    return h.hexdigest()[:12], {name: d.split(":", 1)[0] for name, d in digests.items()}


def library_files(package: Path = PACKAGE) -> str:
    """Every byte of the package, docstrings and comments included (the API page's key)."""
    from d2lmini.book import library_fingerprint

    return library_fingerprint(package, code_only=False)


def package_fingerprint(package: Path = PACKAGE) -> str:
    """A short hash of every file of the package folder ``package`` (code and corpora; caches
    of compiled bytecode left out): a change to any library function changes it, an edited
    docstring or comment does not. The same hash as the trained-weight key's
    (:func:`d2lmini.book.library_fingerprint`), shortened."""
    from d2lmini.book import library_fingerprint

    return library_fingerprint(package)[:12]


@_once
def environment_description() -> dict[str, object]:
    """What besides the code and the data changes the executed outputs: the Python, every
    installed distribution with its version (what ``requirements-lock.txt`` pins) and the CJK
    font matplotlib will draw Chinese labels with (its name, and the name and size of the file
    matplotlib resolves it to), or none. The font file is the one ``findfont`` picks, not the
    list of files matplotlib knows, which depends on the state of matplotlib's font cache."""
    from importlib import metadata

    from d2lmini.book.language import find_cjk_font
    from matplotlib import font_manager

    dists = sorted({f"{d.metadata['Name'].lower()}=={d.version}" for d in metadata.distributions()
                    if d.metadata["Name"] and d.metadata["Name"].lower() != "d2lmini"})
    font = find_cjk_font()
    files = []
    if font is not None:
        path = Path(font_manager.findfont(font_manager.FontProperties(family=font),
                                          fallback_to_default=False))
        files = [f"{path.name}:{path.stat().st_size}"]
    return {"python": sys.version.split()[0], "cjk_font": font, "cjk_font_files": files,
            "packages": dists}


def cache_key(package: Path = PACKAGE) -> str:
    """The ``<code>`` part of the executed-notebook cache folder: a hash of the d2lmini package
    (:func:`package_fingerprint`), of :func:`environment_description` and of the file every kernel
    runs first (``tools/build/kernel_startup.py``: outputs made without it carry no cell times)."""
    startup = hashlib.sha256(KERNEL_STARTUP.read_bytes()).hexdigest()
    text = json.dumps([package_fingerprint(package), environment_description(), startup],
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def jupyter_cache_dir(lang: str, package: Path = PACKAGE) -> Path:
    """Where myst-nb caches the executed notebooks of edition ``lang`` for the data this build
    reads and the code and environment it runs (every builder of the book, HTML or PDF, reads
    the same cache: nothing is executed twice). ``KEY.json`` beside it says what it is for."""
    fingerprint, sources = data_fingerprint()
    folder = CACHE_ROOT / f"data-{fingerprint}-code-{cache_key(package)}"
    folder.mkdir(parents=True, exist_ok=True)
    env = environment_description()
    key = {"data": sources, "datasets": dataset_digests(),
           "d2lmini": package_fingerprint(package), "python": env["python"],
           "cjk_font": env["cjk_font"], "packages": len(env["packages"])}
    (folder / "KEY.json").write_text(json.dumps(key, indent=1) + "\n", encoding="utf-8")
    return folder / lang


def cell_timeout() -> int:
    """myst-nb's per-cell limit in seconds: ``$D2LMINI_CELL_TIMEOUT`` (0: none) or
    :data:`CELL_TIMEOUT`."""
    value = os.environ.get("D2LMINI_CELL_TIMEOUT", "").strip()
    if not value:
        return CELL_TIMEOUT
    try:
        seconds = int(value)
    except ValueError:
        raise BuildError(f"D2LMINI_CELL_TIMEOUT must be whole seconds; got {value!r}") from None
    return seconds if seconds > 0 else -1


def cell_times_file(lang: str) -> Path:
    """Where the kernels of an edition record how long each cell ran
    (``tools/build/kernel_startup.py``; the execution report reads it): beside the executed
    notebooks whose outputs those runs made."""
    return jupyter_cache_dir(lang) / "cell-times.jsonl"


def _cell_reads(times_file: Path) -> dict[str, set[str] | None]:
    """{cell digest: the data sets that cell read} from an edition's cell-times file
    (``tools/build/kernel_startup.py``); ``None`` for a cell whose reads were not recorded."""
    from tools.build.book_sphinx.timing import time_records

    reads: dict[str, set[str] | None] = {}
    for record in time_records(times_file):
        digest, read = str(record["cell"]), record.get("reads")
        known = reads.get(digest, set())
        reads[digest] = None if known is None or not isinstance(read, list) \
            else known | set(read)
    return reads


def share_executions(lang: str, package: Path = PACKAGE) -> list[str]:
    """Give this build's executed-notebook cache of edition ``lang`` each chapter that another
    build executed with the same code and environment (the same ``code-<code>`` folder name)
    but other data, when the chapter read no data set that the two builds have differently.

    What a chapter read is what its kernel recorded for each code cell (``reads`` in the
    edition's ``cell-times.jsonl``, :mod:`kernel_startup`); a chapter with a cell whose reads
    were not recorded is not shared. So the published build and the nothing-at-all build
    execute once the chapters that read no data, and chapter 3 when both use text8's offline
    substitute; the preface (which looks for every data set) and the chapters that read the
    translation pairs run in each. The adopted chapters' cell times come along. Returns the
    adopted chapters' files."""
    from tools.build.book_sphinx.timing import cell_digest
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    target = jupyter_cache_dir(lang, package)
    ours = dataset_digests()
    dest = get_cache(str(target))
    have = {r.hashkey for r in dest.list_cache_records()}
    adopted: list[str] = []
    for folder in sorted(CACHE_ROOT.glob(f"data-*-code-{cache_key(package)}")):
        if folder == target.parent or not (folder / lang).is_dir():
            continue
        try:
            theirs = json.loads((folder / "KEY.json").read_text(encoding="utf-8"))["datasets"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # made before data sets were keyed one by one
        differ = {n for n in set(ours) | set(theirs) if ours.get(n) != theirs.get(n)}
        times_file = folder / lang / "cell-times.jsonl"
        reads = _cell_reads(times_file)
        source = get_cache(str(folder / lang))
        for record in source.list_cache_records():
            if record.hashkey in have:
                continue
            bundle = source.get_cache_bundle(record.pk)
            cells = [cell_digest(c.source) for c in bundle.nb.cells
                     if c.cell_type == "code" and c.source.strip()]
            if any(reads.get(d) is None or reads[d] & differ for d in cells):
                continue
            dest.cache_notebook_bundle(CacheBundleIn(bundle.nb, record.uri, data=record.data),
                                       check_validity=False)
            _copy_cell_times(times_file, target / "cell-times.jsonl", set(cells))
            have.add(record.hashkey)
            adopted.append(Path(record.uri).stem)
    return adopted


def _copy_cell_times(source: Path, dest: Path, cells: set[str]) -> None:
    """Append the records of ``source`` about ``cells`` to ``dest``."""
    from tools.build.book_sphinx.timing import time_records

    with open(dest, "a", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in time_records(source) if r["cell"] in cells)


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def kernel_env(base: dict[str, str]) -> dict[str, str]:
    """Thread settings for the kernels, unless ``base`` sets them: OpenMP threads that sleep
    while they wait (``OMP_WAIT_POLICY=PASSIVE``; spinning threads make two CPU-bound processes
    on the same cores five times slower each instead of two) and one thread per core this
    process may use."""
    cores = usable_cores()
    env = dict(base)
    for name, value in (("OMP_WAIT_POLICY", "PASSIVE"), ("OMP_NUM_THREADS", str(cores)),
                        ("MKL_NUM_THREADS", str(cores))):
        env.setdefault(name, value)
    return env


def _theme_options(cfg: dict, repo: dict, lang: str) -> dict:
    """The theme's options of one edition: the page's source is book/<lang>/<page>.md on the
    main branch ("edit this page"); launch buttons open <lang>/<page>.ipynb in the notebooks
    branch instead (book_sphinx.i18n); the header holds the language switcher and the PDF."""
    theme = dict(cfg.get("html_theme_options", {}))
    theme.update({
        "repository_branch": repo.get("branch", "main"),
        "path_to_docs": f"book/{lang}",
        "article_header_end": ["lang-switcher.html", "pdf-link.html",
                               "article-header-buttons.html"],
    })
    if lang == "zh":  # the theme's default, "Search this book...", has no translation
        theme["search_bar_text"] = "搜索本书……"
    return theme


def sphinx_config(lang: str, *, student: bool, toc_path: Path, strict: bool,
                  assets: Path) -> dict:
    """The Sphinx configuration of one edition: ``_config.yml`` converted by jupyter-book,
    plus the per-edition settings."""
    from jupyter_book.config import get_final_config

    srcdir = ROOT / "book" / lang
    user = load_yaml(ROOT / "_config.yml")
    repo = user.get("repository", {})
    nb_branch = repo.pop("notebooks_branch", "notebooks")
    user["repository"] = repo
    cfg, _ = get_final_config(user_yaml=user, cli_config={"latex_individualpages": False},
                              sourcedir=srcdir, validate=True)

    # Live code in the page comes from book_sphinx.browser (Pyodide, packed from npm), not thebe:
    # sphinx-thebe inserts its CDN script twice per page (a JavaScript error) under Sphinx 7.
    cfg["extensions"] = [e for e in cfg["extensions"] if e != "sphinx_thebe"]
    theme = _theme_options(cfg, repo, lang)
    # _config.yml gives .bib paths relative to the edition folder; the generated conf.py lives
    # elsewhere and sphinxcontrib-bibtex resolves relative paths against the conf dir
    bibfiles = [str((srcdir / b).resolve()) for b in cfg.get("bibtex_bibfiles", [])]
    site = (user.get("html", {}) or {}).get("baseurl", "") or ""
    cfg.update({
        "project": TITLES[lang],
        "html_title": TITLES[lang],
        "author": AUTHORS[lang],
        "language": SPHINX_LANGUAGE[lang],
        "html_search_language": "zh" if lang == "zh" else "en",
        "html_theme_options": theme,
        "html_static_path": [str(ROOT / "_static"), str(assets)],
        "html_css_files": ["book.css"],
        "html_js_files": ["book.js"],
        "mathjax_path": "mathjax/tex-mml-chtml.js",
        "bibtex_bibfiles": bibfiles,
        "external_toc_path": str(toc_path),
        "external_toc_exclude_missing": True,
        "nb_execution_cache_path": str(jupyter_cache_dir(lang)),
        "nb_execution_mode": cfg.get("nb_execution_mode", "cache"),
        "nb_execution_timeout": cell_timeout(),
        "book_cell_timeout": cell_timeout(),
        "book_cell_times": str(cell_times_file(lang)),
        "book_lang": lang,
        "book_notebooks_branch": nb_branch,
        "book_site_root": site.rstrip("/"),
        "html_baseurl": f"{site.rstrip('/')}/{lang}/" if site else "",
        "hide_solutions": bool(student),
        "book_library_files": library_files(),
    })
    cfg.update(UI_STRINGS[lang])
    cfg.setdefault("exclude_patterns", [])
    if not strict:
        # single-chapter builds: references into chapters not built are expected
        cfg["suppress_warnings"] = list(cfg.get("suppress_warnings", [])) + ["ref", "bibtex"]
    return cfg


def write_conf(conf_dir: Path, cfg: dict) -> None:
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "config.json").write_text(
        json.dumps(cfg, indent=1, default=str, ensure_ascii=False), encoding="utf-8")
    (conf_dir / "conf.py").write_text(
        "# Generated by tools/build/build_book.py from _config.yml -- do not edit.\n"
        "import json\n"
        "from pathlib import Path\n"
        "globals().update(json.loads(Path(__file__).with_name('config.json')"
        ".read_text(encoding='utf-8')))\n",
        encoding="utf-8",
    )


# ---------------------------------------------------------------------------- build
def build_edition(lang: str, *, variant: str, toc_path: Path, strict: bool, assets: Path,
                  build: Path = BUILD, quiet: bool = False, fresh: bool = False) -> float:
    """Build one edition into ``<build>/<variant>/<lang>``; return the seconds it took."""
    outdir = build / variant / lang
    conf_dir = build / ".conf" / variant / lang
    cfg = sphinx_config(lang, student=variant == "student", toc_path=toc_path, strict=strict,
                        assets=assets)
    write_conf(conf_dir, cfg)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-c", str(conf_dir),
           "-d", str(build / ".doctrees" / variant / lang), str(ROOT / "book" / lang), str(outdir)]
    if strict:
        cmd += ["-W", "--keep-going"]
    if quiet:
        cmd.append("-q")
    if fresh:
        cmd.append("-E")
    env = kernel_env(dict(os.environ))
    # A kernel started with MPLBACKEND set (CI sets Agg for the tests) keeps that backend and
    # never shows a figure; without it, ipykernel selects the inline backend, whose figures
    # become the page's images. Sphinx itself draws nothing.
    env.pop("MPLBACKEND", None)
    env["D2LMINI_LANG"] = lang  # the kernels label plots (and say where data came from) in it
    # each kernel times its cells for the execution report (book_sphinx.timing)
    env["PYTHONSTARTUP"] = str(KERNEL_STARTUP)
    env["D2LMINI_CELL_TIMES"] = str(cell_times_file(lang))
    # trained weights cached by the chapters (d2lmini.book.load_or_train): the second edition loads
    # what the first trained; a build from clean (no _build) trains afresh
    env.setdefault("D2LMINI_TRAIN_CACHE", str(CACHE_ROOT.parent / ".train_cache"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    adopted = share_executions(lang)
    if adopted:
        log(f"{lang}: executed by a build with other data, which they do not read: "
            + ", ".join(adopted))
    log(f"{lang}: sphinx-build {' '.join(cmd[4:])}")
    cache_dir = jupyter_cache_dir(lang)
    before = executions(cache_dir)
    t0, start = time.perf_counter(), time.time()
    rc = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
    dt = time.perf_counter() - t0
    executed = {name: seconds for name, seconds in executions(cache_dir).items()
                if before.get(name) != seconds}
    ci_times.record(build_label(variant), start, time.time(), edition=lang, executed=executed,
                    shared=adopted)
    if rc != 0:
        raise BuildError(f"{lang}: sphinx-build failed (exit {rc}) after {dt:.0f} s")
    log(f"{lang}: built in {dt:.0f} s -> {outdir}/index.html")
    return dt


def executions(cache_dir: Path) -> dict[str, float]:
    """{page: seconds myst-nb took to execute it} for the notebooks cached in ``cache_dir`` (a
    page executed again gets a new record, so comparing two of these shows what ran between)."""
    from jupyter_cache import get_cache

    if not cache_dir.exists():
        return {}
    return {Path(r.uri).stem: round(float(r.data.get("execution_seconds") or 0), 1)
            for r in get_cache(str(cache_dir)).list_cache_records()}


def build_label(variant: str) -> str:
    """How the timing table names a build: by its variant and by the data it reads."""
    if variant == "student":
        return "student edition"
    if variant == "only":
        return "one-chapter build"
    kinds = set(data_fingerprint()[1].values())
    return ("published build (real data)" if kinds - {"offline"} else
            "nothing-at-all build (offline corpora)")


def edition_toc(lang: str, toc_path: Path, only: str | None, variant: str,
                build: Path = BUILD) -> Path:
    """The table of contents to build: ``toc_path``, or one holding just the chapter ``only``.
    Raises :class:`BuildError` when a listed file is missing."""
    names = toc_files(toc_path)
    if only is not None:
        if only not in names:
            raise BuildError(f"--only {only!r}: not in _toc.yml (one of: "
                             f"{', '.join(sorted(names))})")
        path = build / ".conf" / variant / lang / "_toc.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump({"format": "jb-book", "root": only}), encoding="utf-8")
        return path
    missing = [n for n in names if not any((ROOT / "book" / lang).glob(n + ".*"))]
    if missing:
        raise BuildError(f"book/{lang}: files listed in _toc.yml are missing: "
                         f"{', '.join(missing)}")
    return toc_path


#: the landing page's PDF links, one per edition whose PDF is built
PDF_LINKS = {
    "zh": ('<a href="pdf/{name}" lang="zh-CN" hreflang="zh-CN" type="application/pdf">'
           '中文版 PDF</a>'),
    "en": '<a href="pdf/{name}" hreflang="en" type="application/pdf">English edition (PDF)</a>',
}


def write_root_index(out_root: Path, student: bool = False) -> None:
    """The site's landing page: it sends a reader to the edition of their language, and lists
    the downloads, the PDF of an edition only where it is built (in ``<site>/pdf/``, or in
    ``_build/pdf/``, from where :func:`copy_pdfs` copies it)."""
    from tools.bookmeta import pdf_name
    from tools.build.book_sphinx.reader import pdf_built

    template = string.Template((TEMPLATES / "root_index.html").read_text(encoding="utf-8"))
    out_root.mkdir(parents=True, exist_ok=True)
    names = {lang: pdf_name(lang, student=student) for lang in ("zh", "en")}
    links = [PDF_LINKS[lang].format(name=name) for lang, name in names.items()
             if pdf_built(out_root / lang, name)]
    pdfs = "<li>" + "\n      · ".join(links) + "</li>"
    (out_root / "index.html").write_text(
        template.substitute(title_zh=TITLES["zh"], title_en=TITLES["en"],
                            pdf_links=pdfs if links else ""), encoding="utf-8")
    (out_root / ".nojekyll").write_text("")


def copy_pdfs(site: Path, student: bool = False, build: Path = BUILD) -> None:
    """The PDFs built earlier (``tools/build/build_pdf.py``, into ``_build/pdf/``) go into the
    site of every edition built, where its pages' PDF button points (``book_sphinx.reader``
    shows the button when the PDF is in either place)."""
    from tools.bookmeta import pdf_name

    for lang in LANGS:
        pdf = build / "pdf" / pdf_name(lang, student=student)
        if pdf.exists() and (site / lang).is_dir():
            (site / "pdf").mkdir(exist_ok=True)
            shutil.copyfile(pdf, site / "pdf" / pdf.name)


def publish_downloads(build: Path = BUILD, variant: str = "html", student: bool = False,
                      offline_copy: bool = True) -> None:
    """After a build: the PDFs built earlier go into the site (:func:`copy_pdfs`), its landing
    page lists them, and (``offline_copy``: a full build of both editions) the site is zipped
    for offline reading (``tools/build/package_site.py``)."""
    from tools.build import package_site

    copy_pdfs(build / variant, student=student, build=build)
    write_root_index(build / variant, student=student)
    if offline_copy:
        zip_path = package_site.build_offline_copy(build / variant)
        log(f"offline copy: {zip_path} ({zip_path.stat().st_size / 2**20:.1f} MiB)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description="Build both editions of the book (zh, en) into _build/html/.",
        epilog="Examples: `--only mha-numpy --lang zh` builds one chapter into _build/only/zh/ "
        "(quick, not strict); `--student` builds the edition without solutions into "
        "_build/student/.",
    )
    p.add_argument("--lang", choices=LANGS, help="build one edition only (default: both)")
    p.add_argument("--only", metavar="NAME",
                   help="build a single chapter (file name without .md) into _build/only/<lang>/")
    p.add_argument("--student", action="store_true",
                   help="student edition: exercise solutions removed, into _build/student/")
    p.add_argument("--toc", type=Path, default=ROOT / "_toc.yml",
                   help="a table of contents other than _toc.yml (for testing the machinery)")
    p.add_argument("--fresh", action="store_true",
                   help="re-read every page (sphinx -E); executed outputs still come from the "
                        "cache")
    p.add_argument("-q", "--quiet", action="store_true", help="less output from Sphinx")
    p.add_argument("-j", "--jobs", type=int, default=min(len(LANGS), usable_cores()),
                   help="editions built at the same time (default: both where two cores are "
                        "usable; -j 1 builds them one after the other)")
    p.add_argument("--build-dir", type=Path, default=BUILD,
                   help="where to write the site (default _build; the executed-notebook cache "
                        "stays in _build/.jupyter_cache)")
    args = p.parse_args(argv)
    build = args.build_dir.resolve()

    variant = "student" if args.student else ("only" if args.only else "html")
    toc_path = args.toc.resolve()
    strict = args.only is None and toc_path == (ROOT / "_toc.yml").resolve()
    langs = [args.lang] if args.lang else list(LANGS)
    t0 = time.perf_counter()
    try:
        fingerprint, sources = data_fingerprint()
        log("data: " + ", ".join(f"{k} {v}" for k, v in sources.items())
            + f" (executed-notebook cache data-{fingerprint}-code-{cache_key()})")
        if "zh" in langs and environment_description()["cjk_font"] is None:
            raise BuildError("the zh edition needs a font with Chinese characters for its plot "
                             "labels and none was found: pip install noto-cjk-sans-otc (in "
                             "requirements.txt; `make book` installs it) or apt install "
                             "fonts-noto-cjk")
        assets = ensure_assets(build)
        tocs = {lang: edition_toc(lang, toc_path, args.only, variant, build) for lang in langs}
        jupyter_cache_dir(langs[0])  # the keys, once, before the threads (see _once)

        def one(lang: str) -> float:
            return build_edition(lang, variant=variant, strict=strict, assets=assets, build=build,
                                 toc_path=tocs[lang], quiet=args.quiet, fresh=args.fresh)
        with ThreadPoolExecutor(max_workers=max(1, min(args.jobs, len(langs)))) as pool:
            times = dict(zip(langs, pool.map(one, langs)))
    except BuildError as e:
        print(f"[build_book] {e}", file=sys.stderr)
        return 1
    publish_downloads(build, variant, student=args.student,
                      offline_copy=variant == "html" and not args.lang)
    total = time.perf_counter() - t0
    log(", ".join(f"{k}: {v:.0f} s" for k, v in times.items()) + f"; total {total:.0f} s")
    log(f"open {build / variant / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
