"""The book built as a reader with nothing at all builds it (no data directory, no network, an
empty download cache), once per test session, and small helpers to read the result.

The build goes to ``_build/test-offline`` so that it never replaces a reader's own ``make book``
output; the executed-notebook cache is shared (``_build/.jupyter_cache``, one folder per set of
data), so a ``make book`` on a machine without data makes this build quick.

Where the real data sets are at hand and the session runs the published build's tests, that
build (``D2LMINI_DATA_DIR``, into ``_build``, what ``make book`` writes) starts as soon as the
nothing-at-all build is done, in the background at low priority (``nice``), so that it uses the
cores the browser and PDF tests leave idle; it then takes from the nothing-at-all build the
chapters that read no real data (``build_book.share_executions``). ``published_build`` waits for
it.
"""
from __future__ import annotations

import atexit
import functools
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import ci_times
from tools.bookmeta import LANGS, ROOT, notebooks, toc_files  # noqa: F401  (re-exported for the tests)

BUILD = ROOT / "_build" / "test-offline"
HTML = BUILD / "html"
PUBLISHED = ROOT / "_build"  # the published build: what `make book` writes
#: The real data sets (``tests/conftest.py`` sets it: ``../shared/data`` beside the checkout or
#: ``$D2LMINI_TEST_DATA_DIR``, where they are), and whether the session tests the published
#: build (then it starts right after the nothing-at-all build).
REAL_DATA: Path | None = None
PUBLISHED_WANTED = False
_published: dict = {}


def nothing_at_all_env(cache_dir: Path | None = None) -> dict[str, str]:
    """The environment of a reader with nothing: every D2LMINI_ variable removed, the network
    forbidden, an empty download cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("D2LMINI_")}
    if cache_dir is None:
        cache_dir = Path(tempfile.mkdtemp(prefix="d2lmini-empty-cache-"))
        atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
    env.update(D2LMINI_OFFLINE="1", D2LMINI_CACHE_DIR=str(cache_dir))
    return env


def run_build(*extra: str, env: dict[str, str], build_dir: Path) -> subprocess.CompletedProcess:
    """``python -m tools.build.build_book -q --build-dir build_dir [extra]`` in ``env``; an
    AssertionError with the end of the output when it fails."""
    proc = subprocess.run(
        [sys.executable, "-m", "tools.build.build_book", "-q", "--build-dir",
         str(build_dir), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stdout[-4000:] + "\n" + proc.stderr[-8000:]).strip()
        raise AssertionError(f"build_book.py {' '.join(extra)} failed (exit {proc.returncode}):\n"
                             f"{tail}")
    return proc


@functools.cache
def build(*extra: str) -> subprocess.CompletedProcess:
    """The book built the nothing-at-all way into ``_build/test-offline`` (once per session);
    the published build starts beside the tests after it (:func:`start_published_build`)."""
    proc = run_build(*extra, env=nothing_at_all_env(), build_dir=BUILD)
    if not extra and PUBLISHED_WANTED:
        start_published_build()
    return proc


def start_published_build() -> None:
    """Start the published build (the real data of :data:`REAL_DATA`, into ``_build``) in the
    background, at low priority, its output in ``_build/published-build.log``; once."""
    if REAL_DATA is None or _published:
        return
    env = nothing_at_all_env()
    env.update(D2LMINI_DATA_DIR=str(REAL_DATA), BOOK_TIMES_BESIDE="1")
    log = ROOT / "_build" / "published-build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    out = open(log, "w", encoding="utf-8")
    lower = (lambda: os.nice(10)) if hasattr(os, "nice") else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.build.build_book", "-q", "--build-dir",
         str(PUBLISHED)], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        preexec_fn=lower, start_new_session=True)
    _published.update(proc=proc, log=log, out=out)
    atexit.register(stop_published_build)


def published_build() -> Path:
    """The published site (``_build/html``): the background build waited for, or (when none
    was started) built now. An AssertionError with the end of its output when it fails."""
    build()
    start_published_build()
    proc, out = _published["proc"], _published["out"]
    t0 = time.time()
    rc = proc.wait()
    ci_times.record("waiting for the published build", t0, time.time())
    out.close()
    if rc != 0:
        tail = _published["log"].read_text(encoding="utf-8", errors="replace")[-8000:]
        raise AssertionError(f"the published build failed (exit {rc}):\n{tail}")
    return PUBLISHED / "html"


def stop_published_build() -> None:
    """At the end of a session whose published build still runs (its tests were not reached):
    stop it and what it started."""
    proc = _published.get("proc")
    if proc is not None and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            proc.terminate()
        proc.wait()


def search_index(lang: str) -> dict:
    text = (HTML / lang / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1 : text.rindex(")")])


def machine_paths() -> list[str]:
    """Paths of the machine that builds the book, which no page may show."""
    paths = {str(ROOT), str(Path.home()), tempfile.gettempdir().rstrip("/") + "/", "/tmp/"}
    return sorted(p for p in paths if len(p) > 1)


def pages_showing_machine_paths(html_root: Path) -> list[str]:
    found = []
    for page in sorted(html_root.glob("*/*.html")):
        text = page.read_text(encoding="utf-8")
        for path in machine_paths():
            if path in text:
                i = text.index(path)
                found.append(f"{page.relative_to(html_root)}: {path!r} in "
                             f"{text[max(0, i - 80):i + 80]!r}")
    return found


# --------------------------------------------------------------------- the zh edition in Chinese
# What a Chinese reader sees on the zh pages is Chinese, or English that belongs there: code,
# math, identifiers, citations, links to URLs, example sentences of the data (set in italics),
# an English gloss in parentheses after its Chinese term (the glossary's convention), a quoted
# English title, the glossary's English terms and proper names (every word capitalised: "Hugging
# Face", "Attention Is All You Need"). Everything else written in English (two or more English
# words in a row) is a string the zh edition forgot to translate.
#: Theme chrome that stays as it is: the language switch is labelled in the language it leads to,
#: and file types, services and keys are names.
ZH_ALLOWED_CHROME = ("English", "Read this page in English", "PDF", "Binder", "Colab", ".ipynb",
                     ".md", ".pdf", "Ctrl", "K")
#: Pages exempt from the page-text check: the API reference shows the package's docstrings
#: (the code's own documentation, in English in both editions) and the bibliography lists
#: works under their original titles. Their chrome and alt text are checked all the same.
ZH_EXEMPT_TEXT = ("api.html", "bibliography.html")

_CJK_RE = "[\u3400-\u9fff\uf900-\ufaff]"
# a word, not part of an identifier, a path or a key:value pair (``d2l.plot``, ``case:mixed``)
_WORD = r"(?<![\w.\-/:|=<])[A-Za-z][a-z]*(?:['’-][A-Za-z][a-z]*)*(?![\w./:|=>])"
_ENGLISH_RUN = re.compile(rf"{_WORD}(?:[ \t\n,;:!?–—]+{_WORD})+")


def _glossary_english() -> list[str]:
    """The English column of the zh glossary's term table (``* - 中文`` / ``  - English``)."""
    text = (ROOT / "book" / "zh" / "glossary.md").read_text(encoding="utf-8")
    terms = [en.strip() for _, en in re.findall(r"^\* - (.+)\n  - (.+)$", text, re.M)]
    # "KV cache (key-value cache)", "byte-pair encoding (BPE)": the term, without and with its
    # gloss, and the gloss
    return [t for term in terms for t in [term, re.sub(r"\s*\([^()]*\)", "", term),
                                          *re.findall(r"\(([^()]+)\)", term)]]


def english_runs(text: str) -> list[str]:
    """The runs of two or more English words in ``text`` that no allowance covers: glosses and
    formulas in parentheses, quoted titles and the glossary's English terms are removed first;
    identifiers (``d2l.plot``, ``num_steps``, ``GPT-2``) and acronyms are not words, and a run
    of capitalised words is a name."""
    text = re.sub(r"[（(][^（）()]*[）)]", lambda m: m[0] if re.search(_CJK_RE, m[0]) else " ",
                  text)
    text = re.sub(r"“[^“”]*”|‘[^‘’]*’|\"[^\"]*\"",
                  lambda m: m[0] if re.search(_CJK_RE, m[0]) else " ", text)
    for phrase in sorted(set(_glossary_english()), key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z]){re.escape(phrase)}(?![A-Za-z])", " ", text)
    runs = []
    for m in _ENGLISH_RUN.finditer(text):
        words = [w for w in re.findall(_WORD, m[0]) if not w.isupper()]  # not acronyms
        if len(words) >= 2 and not all(w[0].isupper() for w in words):  # not a name
            runs.append(" ".join(m[0].split()))
    return runs


def zh_reader_problems(zh_root: Path) -> dict[str, list[str]]:
    """Every string of the built zh edition that is English where it should be Chinese, by
    kind: ``text`` (page text, glued values included), ``announcements`` (the ``[d2lmini]``
    lines of the data loaders), ``alt`` (alt texts), ``chrome`` (the theme's labels, tooltips,
    accessible names) and ``plots`` (the text of the figures' SVG files that is neither data the
    page shows nor Chinese). Each entry names the page."""
    from bs4 import BeautifulSoup, Comment, Doctype

    def words_of(item: str) -> list[str]:
        return re.findall(r"[A-Za-z][A-Za-z'’-]*", item)

    found: dict[str, list[str]] = {k: [] for k in ("text", "announcements", "alt", "chrome",
                                                   "plots")}
    attrs = ("title", "aria-label", "data-bs-title", "alt", "placeholder")
    for page in sorted(zh_root.glob("*.html")):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for el in soup.select("script, style"):
            el.decompose()
        article = soup.select_one("article.bd-article") or soup.new_tag("article")
        name = page.name
        # the theme's chrome: everything outside the article, and the article's heading links
        for el in [e for e in soup.find_all(True) if article not in e.parents and e is not article]:
            for a in attrs:
                value = el.get(a)
                if isinstance(value, str) and _is_foreign_chrome(value):
                    found["chrome"].append(f"{name}: {a}={value!r}")
        # (the tables of contents repeat the pages' titles and headings, checked on their pages)
        tocs = soup.select(".bd-docs-nav, .bd-toc-nav, .page-toc, .section-nav")
        for node in soup.find_all(string=True):
            if isinstance(node, (Comment, Doctype)) or article in node.parents \
                    or any(toc in node.parents for toc in tocs):
                continue
            if _is_foreign_chrome(str(node)):
                found["chrome"].append(f"{name}: {' '.join(node.split())!r}")
        for el in article.select(".headerlink[title]"):
            if _is_foreign_chrome(el["title"]):
                found["chrome"].append(f"{name}: {el['title']!r}")
        # alt texts of the book's figures
        for img in article.find_all("img"):
            alt = img.get("alt") or ""
            if english_runs(alt) or (alt and not re.search(_CJK_RE, alt)
                                     and re.search(r"[A-Za-z]{3}", alt)):
                found["alt"].append(f"{name}: {alt!r}")
        # the loaders' announcements, in the cells' output
        outputs = article.select(".cell_output, div.output")
        vocabulary = set()
        for out in outputs:
            text = out.get_text("\n")
            vocabulary |= {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
            for line in text.splitlines():
                if line.startswith("[d2lmini]") and english_runs(line.split("]", 1)[1]):
                    found["announcements"].append(f"{name}: {line.strip()}")
        for code in article.select(".cell_input, pre, code, em"):  # code, names, examples
            vocabulary |= {w.lower() for w in re.findall(r"[A-Za-z]+", code.get_text())}
        vocabulary |= {w.lower() for t in _glossary_english() for w in re.findall("[A-Za-z]+", t)}
        # the figures' text: Chinese, numbers, math, or the data and names the page shows
        for img in article.find_all("img", src=re.compile(r"_images/.*\.svg$")):
            svg = (zh_root / img["src"]).read_text(encoding="utf-8")
            for label in svg_axis_labels(svg):  # matplotlib's axis labels: the edition's words
                if re.search(r"[A-Za-z]{3}", label) and not re.search(_CJK_RE, label) \
                        and not re.search(r"[$=√×^_(]", label):
                    found["plots"].append(f"{name}: axis label {label!r} in {img['src']}")
            items = re.findall(r"<!-- (.*?) -->", svg) + re.findall(r"<text\b[^>]*>(.*?)</text>",
                                                                     svg, re.S)
            for item in items:
                item = html.unescape(re.sub(r"<[^>]+>", "", item)).strip()
                if re.search(_CJK_RE, item) or re.search(r"[$=√×^_]", item):  # Chinese, math
                    continue
                words = [w for w in re.findall(r"[A-Za-z]{2,}", item) if not w.isupper()
                         and not (w[0].isupper() and len(words_of(item)) == 1)]
                if [w for w in words if w.lower() not in vocabulary]:
                    found["plots"].append(f"{name}: {item!r} in {img['src']}")
        # the page's text, without code, math, outputs, citations, URLs and example sentences
        if name in ZH_EXEMPT_TEXT:
            continue
        for el in article.select(
                "pre, code, kbd, .math, mjx-container, .cell_input, .cell_output, div.output, "
                ".highlight, a[href^='bibliography.html'], a.reference.external, .headerlink"):
            el.decompose()
        for em in article.find_all("em"):
            if not re.search(_CJK_RE, em.get_text()):
                em.decompose()  # an example sentence of the data (*i'm home .*)
        for node in article.find_all(string=True):
            if isinstance(node, (Comment, Doctype)):
                node.extract()
        for run in english_runs(article.get_text(" ")):
            found["text"].append(f"{name}: {run!r}")
    return {kind: sorted(set(v)) for kind, v in found.items()}


def svg_axis_labels(svg: str) -> list[str]:
    """The axis labels of a figure matplotlib drew to SVG: the text of each ``text_*`` group
    directly inside a ``matplotlib.axis_*`` group (tick labels sit deeper, in ``xtick_*``)."""
    import xml.etree.ElementTree as ET

    builder = ET.TreeBuilder(insert_comments=True)
    parser = ET.XMLParser(target=builder)
    parser.feed(svg)
    root = parser.close()
    g = "{http://www.w3.org/2000/svg}g"
    labels = []
    for axis in root.iter(g):
        if not axis.get("id", "").startswith("matplotlib.axis_"):
            continue
        for child in axis.findall(g):
            if child.get("id", "").startswith("text_"):
                labels += [(c.text or "").strip() for c in child.iter() if c.tag is ET.Comment]
    return labels


def _is_foreign_chrome(value: str) -> bool:
    """A chrome string that is neither Chinese, nor allowed, nor free of English words."""
    value = " ".join(value.split())
    if not value or value in ZH_ALLOWED_CHROME:
        return False
    if english_runs(value):  # "作者： The Transformer book authors"
        return True
    if re.search(_CJK_RE, value):
        return False
    if value.startswith(("d2lmini.", "torch.")):  # the API's names (link titles)
        return False
    return bool(re.search(_WORD, value))
