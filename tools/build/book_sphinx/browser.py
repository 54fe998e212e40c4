""""Run in your browser": the NumPy chapters' code cells run in the page with Pyodide.

For each page of ``book_browser_pages`` (chapters 2 and 3), under the HTML builders, this
extension

* chooses the code cells that run in the browser: each cell of the page, in order, with the
  statements that only the page needs taken out (imports of modules that Pyodide does not ship,
  such as ``torch``, ``d2lmini`` or ``myst_nb``, and the calls of names they bound, such as
  ``glue(...)`` or ``book.claim(...)``, which write values into the prose or check its sentences)
  and each ``book.label(en, zh)`` written out as the edition's string, is run by this Python in a
  fresh process, in the namespace the cells chosen before it made; a cell goes to the browser
  when it runs there and something of it is left (:func:`select_cells`). A cell that does not
  run lends the constants it assigns (``d_model = 100``) when a later chosen cell reads them. So
  a chosen cell is one that runs with only the standard library and the packages Pyodide loads
  for it (:data:`BROWSER_PACKAGES`), after the chosen cells before it;
* writes them to ``_static/browser/<page>.json`` (each cell's place among the page's code
  cells, its code as it runs in the browser, how many lines were taken out, whether only its
  constants run: :func:`constants_of`), for a zh page with Chinese labels the glyphs they need
  (:func:`cjk_subset`), and the output each printed here to
  ``_static/browser/<page>-reference.json`` (which the page never loads and the browser tests
  compare with);
* adds ``_static/d2l-browser.js`` to those pages and a "Run in your browser" item to the launch
  menu beside Colab and Binder.

Pyodide's core is packed into ``_static/pyodide/`` by ``tools/build/build_book.py`` (npm
``pyodide``), so Python starts from the site; NumPy, SciPy and Matplotlib are fetched from Pyodide's
CDN when a cell first imports them (``packageBaseUrl``), which needs a network. The offline zip
leaves Pyodide out: a page read from ``file://`` may not start WebAssembly modules from files, and
there is no network for the packages anyway; such a page says so and points to Colab and Binder.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes

#: the packages of Pyodide's distribution a chosen cell may import, besides the standard library
BROWSER_PACKAGES = ("numpy", "scipy", "matplotlib")
#: the launch menu's item, per edition
LABELS = {"en": ("Run in your browser", "Run this chapter's NumPy cells in the page (Pyodide)"),
          "zh": ("在浏览器中运行", "在本页中运行本章的 NumPy 代码单元（Pyodide）")}
#: how long one cell may run while cells are chosen, in seconds
CELL_SECONDS = 120


def _top(module: str | None) -> str:
    return (module or "").split(".")[0]


def strip_cell(source: str, allowed: set[str], unavailable: set[str],
               lang: str = "en") -> tuple[str, int]:
    """``source`` without its top-level imports of modules outside ``allowed`` and without its
    top-level expression statements whose call starts from a name in ``unavailable`` (names
    that such imports bound, in this cell or an earlier one; the set grows); each
    ``book.label(en, zh)`` is replaced by its argument for ``lang``, the string it returns in that
    edition. Returns the code and the number of lines taken out. A cell that does not parse is
    returned as it is."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, 0
    labelled = _inline_labels(source, tree, lang)
    if labelled != source:
        source, tree = labelled, ast.parse(labelled)
    drop: list[tuple[int, int]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import) and any(_top(a.name) not in allowed for a in stmt.names):
            unavailable.update((a.asname or a.name).split(".")[0] for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom) and (stmt.level or _top(stmt.module) not in allowed):
            unavailable.update(a.asname or a.name for a in stmt.names)
        elif not (isinstance(stmt, ast.Expr) and _root_name(stmt.value) in unavailable):
            continue
        drop.append((stmt.lineno, stmt.end_lineno or stmt.lineno))
    lines = source.splitlines()
    gone = {i for first, last in drop for i in range(first, last + 1)}
    kept: list[str] = []
    after_gap = True  # blank lines that a line taken out would leave doubled (or first) go too
    for i, line in enumerate(lines, start=1):
        if i in gone:
            after_gap = True
        elif line.strip():
            kept.append(line)
            after_gap = False
        elif not (after_gap and (not kept or not kept[-1].strip())):
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept), len(gone)


def _inline_labels(source: str, tree: ast.AST, lang: str) -> str:
    """``source`` with every call ``book.label(en, zh)`` replaced by the source of its ``en`` or
    ``zh`` argument (the book's way to write a string of each edition in one cell)."""
    calls = [node for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "label" and isinstance(node.func.value, ast.Name)
             and node.func.value.id == "book" and len(node.args) == 2 and not node.keywords]
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")

    def span(node):
        return (offsets[node.lineno - 1] + node.col_offset,
                offsets[node.end_lineno - 1] + node.end_col_offset)

    outer = [c for c in calls if not any(o is not c and span(o)[0] <= span(c)[0]
                                         and span(c)[1] <= span(o)[1] for o in calls)]
    for call in sorted(outer, key=lambda c: span(c)[0], reverse=True):
        start, end = span(call)
        arg_start, arg_end = span(call.args[0 if lang == "en" else 1])
        data = data[:start] + data[arg_start:arg_end] + data[end:]
    return data.decode("utf-8")


def _root_name(node: ast.AST) -> str | None:
    """The name a call or attribute chain starts from: ``d2l`` for ``book.claim(...)``."""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def allowed_modules(packages=BROWSER_PACKAGES) -> set[str]:
    """The standard library's top-level modules and ``packages``."""
    return set(sys.stdlib_module_names) | set(packages)


#: how the page and the build run a cell (one file for both: ``run_cell``, ``take_figures``)
RUN_CELL = Path(__file__).resolve().parents[3] / "_static" / "d2l_browser_run.py"

#: run in a fresh interpreter by :func:`select_cells`: reads the cells (JSON) on stdin, runs each
#: as the page would (``run_cell``), a failed one again with only its constants, and writes for
#: each whether it ran and what it printed
_RUNNER = r"""
import json, signal, sys
cells, seconds, helper = json.load(sys.stdin)
exec(compile(open(helper, encoding="utf-8").read(), helper, "exec"))
def alarm(*_):
    raise TimeoutError(f"the cell ran longer than {seconds} s")
signal.signal(signal.SIGALRM, alarm)
ns, results = {"__name__": "__main__"}, []
def run(code):
    trial = dict(ns)
    signal.alarm(seconds)
    stdout, _, error = run_cell(code, trial)
    signal.alarm(0)
    take_figures()
    if error:
        return None, {"ok": False, "error": error}
    return trial, {"ok": True, "stdout": stdout}
for code, constants in cells:
    trial, result = run(code)
    if trial is None and constants:
        trial, result = run(constants)
        result["constants"] = True
    ns = trial if trial is not None else ns
    results.append(result)
json.dump(results, sys.stdout)
"""


def select_cells(sources: list[str], lang: str = "en", packages=BROWSER_PACKAGES,
                 seconds: int = CELL_SECONDS) -> list[dict]:
    """The cells of ``sources`` (a page's code cells, in order) that run in the browser; see the
    module's docstring. Each is ``{"index": place among sources, "code": what runs,
    "dropped": lines taken out, "stdout": what it printed here}``."""
    allowed, unavailable = allowed_modules(packages), set()
    stripped = [strip_cell(s, allowed, unavailable, lang) for s in sources]
    candidates = [(i, code, dropped, constants_of(code))
                  for i, (code, dropped) in enumerate(stripped) if _has_statements(code)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    env.update(MPLBACKEND="Agg", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as tmp:  # what a cell writes stays out of the tree
        done = subprocess.run(
            [sys.executable, "-c", _RUNNER],
            input=json.dumps([[(c, constants) for _, c, _, constants in candidates], seconds,
                              str(RUN_CELL)]),
            capture_output=True, text=True, cwd=tmp, env=env, check=False)
    if done.returncode:
        raise RuntimeError(f"choosing the cells that run in the browser failed:\n{done.stderr}")
    chosen = []
    for (i, code, dropped, constants), r in zip(candidates, json.loads(done.stdout)):
        if r["ok"] and r.get("constants"):
            code = constants
            dropped = len(sources[i].splitlines()) - len(code.splitlines())
        if r["ok"]:
            chosen.append({"index": i, "code": code, "dropped": dropped, "stdout": r["stdout"],
                           "constants_only": bool(r.get("constants"))})
    return _needed(chosen)


def _needed(chosen: list[dict]) -> list[dict]:
    """``chosen`` without the cells reduced to constants that no later chosen cell reads."""
    kept, read = [], set()
    for cell in reversed(chosen):
        tree = ast.parse(cell["code"])
        if cell["constants_only"] and not {t.id for s in tree.body for t in s.targets} & read:
            continue
        kept.append(cell)
        read |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load)}
    return kept[::-1]


def constants_of(code: str) -> str:
    """The top-level assignments of ``code`` whose value is a literal (``d_model = 100``), with
    their comments: what a later cell may need of a cell that cannot run in the browser."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    lines = code.splitlines()
    kept = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            try:
                ast.literal_eval(stmt.value)
            except ValueError:
                continue
            kept += lines[stmt.lineno - 1:stmt.end_lineno]
    return "\n".join(kept)


def _has_statements(code: str) -> bool:
    try:
        return bool(ast.parse(code).body)
    except SyntaxError:
        return False


def pyodide_version(app) -> str:
    """The version of the Pyodide that the build packs (``pyodide/`` of a static folder): the
    page fetches its packages from the CDN folder of that version."""
    for folder in app.config.html_static_path:
        path = Path(app.confdir, folder) / "pyodide" / "package.json"
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))["version"]
    raise RuntimeError("Pyodide is not packed (pyodide/ in html_static_path): "
                       "tools/build/build_book.py "
                       "packs it from the npm package pyodide")


def _code_sources(doctree) -> list[str]:
    """The sources of the page's code cells, in order (the cells the page shows)."""
    return [node.astext() for cell in doctree.findall(nodes.container)
            if cell.get("nb_element") == "cell_code"
            for node in cell.findall(nodes.literal_block)
            if node.parent.get("nb_element") == "cell_code_source"]


#: the font of the Chinese labels the chosen cells draw (Pyodide's Matplotlib has none)
CJK_FAMILY = "Noto Sans CJK SC"


def cjk_subset(text: str, dest: Path) -> Path | None:
    """Write to ``dest`` the glyphs of ``text``'s Chinese characters (and CJK punctuation) from
    Noto Sans CJK SC, the zh edition's plot font (the package ``noto-cjk-sans-otc``), and return
    ``dest``; None when ``text`` has none. A few kilobytes instead of the font's 19 MB."""
    chars = "".join(sorted({ch for ch in text if ord(ch) >= 0x2E80}))
    if not chars:
        dest.unlink(missing_ok=True)
        return None
    from fontTools import subset
    from fontTools.ttLib import TTCollection
    import noto_cjk_sans_otc

    fonts = TTCollection(str(noto_cjk_sans_otc.FONT_PATH), lazy=True).fonts
    font = next(f for f in fonts if f["name"].getDebugName(1) == CJK_FAMILY)
    options = subset.Options()
    options.name_IDs, options.layout_features, options.hinting = ["*"], [], False
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=chars)
    subsetter.subset(font)
    font.save(str(dest))
    return dest


def write_cells(app, doctree, docname: str) -> None:
    if docname not in app.config.book_browser_pages or app.builder.format != "html":
        return
    sources = _code_sources(doctree)
    chosen = select_cells(sources, app.config.book_lang)
    folder = Path(app.outdir) / "_static" / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    page = {"page": docname, "code_cells": len(sources), "packages": list(BROWSER_PACKAGES),
            "pyodide": pyodide_version(app),
            "cells": [{k: c[k] for k in ("index", "code", "dropped", "constants_only")}
                      for c in chosen]}
    font = cjk_subset("".join(c["code"] for c in chosen), folder / f"{docname}-cjk.otf")
    if font is not None:
        page["font"] = {"file": f"browser/{font.name}", "family": CJK_FAMILY}
    (folder / f"{docname}.json").write_text(json.dumps(page, ensure_ascii=False),
                                            encoding="utf-8")
    reference = [{"index": c["index"], "stdout": c["stdout"]} for c in chosen]
    (folder / f"{docname}-reference.json").write_text(
        json.dumps(reference, ensure_ascii=False, indent=1), encoding="utf-8")


def add_launch_item(app, pagename, templatename, context, doctree) -> None:
    if pagename not in app.config.book_browser_pages:
        return
    app.add_js_file("d2l-browser.js")
    text, tooltip = LABELS[app.config.book_lang]
    for group in context.get("header_buttons", []):
        if isinstance(group, dict) and group.get("label") == "launch-buttons":
            group["buttons"].append({"type": "javascript", "javascript": "D2LBrowser.open()",
                                     "tooltip": tooltip, "icon": "fas fa-play", "text": text,
                                     "label": "browser-run"})


def always_reread(app, env, added, changed, removed) -> list[str]:
    """The pages of ``book_browser_pages``: read and written by every build (their executed
    outputs come from the cache), so that their cells are chosen again even when only this
    extension or the runner changed."""
    return [page for page in app.config.book_browser_pages if page in env.found_docs]


#: The pages whose NumPy cells run in the browser (the chapters that need only NumPy, SciPy and
#: Matplotlib); the tests read this list too.
BROWSER_PAGES = ("mha-numpy", "embeddings-positional-encoding")


def setup(app):
    app.add_config_value("book_browser_pages", list(BROWSER_PAGES), "html")
    app.connect("env-get-outdated", always_reread)
    app.connect("doctree-resolved", write_cells)
    # after sphinx-book-theme has added its launch buttons (priority 500)
    app.connect("html-page-context", add_launch_item, priority=950)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
