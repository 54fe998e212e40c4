"""The full two-edition build (README: ``python -m tools.build.build_book``) and checks on its HTML.

The build runs once per session (the jupyter cache in ``_build/.jupyter_cache`` makes a rebuild
without code changes quick); every check below reads its output in ``_build/html``.
"""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from tools.classroom import export_notebooks
from tools.bookmeta import HREFLANG, load_yaml
from built_book import (BUILD, HTML, LANGS, ROOT, build, notebooks, pages_showing_machine_paths,
                        search_index, toc_files)
from bs4 import BeautifulSoup
from tools import myst

pytestmark = pytest.mark.book

OTHER = {"zh": "en", "en": "zh"}
# interface strings that Sphinx / the theme translate (pydata-sphinx-theme, sphinx-book-theme)
ZH_UI = ["搜索", "上一页", "下一页"]
EN_UI = ["Search", "previous", "next"]
EXCEPTION_RE = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b\s*:")


@pytest.fixture(scope="session")
def book():
    build()
    return HTML


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@pytest.mark.parametrize("lang", LANGS)
def test_edition_and_every_page_rendered(book, lang):
    missing = [n for n in toc_files() if not (book / lang / f"{n}.html").is_file()]
    assert not missing, f"{lang}: pages not rendered: {missing}"
    for name in toc_files():
        s = soup(book / lang / f"{name}.html")
        main = s.find("main") or s.find("article")
        assert main is not None and main.find(["h1"]), f"{lang}/{name}.html has no title"


def test_root_language_chooser(book):
    text = (book / "index.html").read_text(encoding="utf-8")
    assert 'href="zh/index.html"' in text and 'href="en/index.html"' in text
    assert "navigator.languages" in text
    assert "中文" in text and "English" in text


@pytest.mark.parametrize("lang", LANGS)
def test_no_error_output(book, lang):
    problems = []
    for name in toc_files():
        s = soup(book / lang / f"{name}.html")
        for block in s.select(".output.stderr, .output.traceback, .output.error"):
            problems.append(f"{name}: stderr/error output block: {block.get_text()[:200]!r}")
        for out in s.select(".cell_output"):
            text = out.get_text()
            if EXCEPTION_RE.search(text):
                problems.append(f"{name}: error in cell output: {text[:300]!r}")
    assert not problems, "\n".join(problems)


PLOT_CALL_RE = re.compile(
    r"\bd2l\.(?:plot|show_heatmaps)\(|\bplt\.(?:subplots|figure|imshow|plot)\(")


@pytest.mark.parametrize("lang", LANGS)
def test_figures_drawn_by_code_appear_on_the_pages(book, lang):
    # A kernel that inherits MPLBACKEND=Agg draws into nothing and the page silently loses its
    # figures: every code cell that plots must leave at least one image in the page.
    from chapter_source import code_cells, read_notebook

    missing = []
    for name in notebooks(lang):
        nb = read_notebook(ROOT / "book" / lang / f"{name}.md")
        plotting = sum(bool(PLOT_CALL_RE.search(src)) for _, src, _ in code_cells(nb))
        images = soup(book / lang / f"{name}.html").select("div.cell_output img")
        if len(images) < plotting:
            missing.append(f"{name}: {plotting} cells draw, {len(images)} images in the page")
    assert not missing, f"{lang}: figures missing: {missing}"


@pytest.mark.parametrize("lang", LANGS)
def test_glue_resolved(book, lang):
    for name in toc_files():
        text = unescape((book / lang / f"{name}.html").read_text(encoding="utf-8"))
        body = text[text.find("<main"):]
        assert "{glue" not in body and "glue:text" not in body, f"{lang}/{name}: unresolved glue"
    # every glue use in the source shows up as rendered text, not as the role markup: a pasted
    # value for {glue}/{glue:text}; for {glue:md}, which myst-nb renders as plain inline text with
    # no pasted-* wrapper, the phrase book.choose picked, as this edition's claims report lists it
    chosen = chosen_phrases(book / lang / "execution-report.html")
    for name in toc_files():
        src = ROOT / "book" / lang / f"{name}.md"
        roles = GLUE_ROLE_RE.findall(src.read_text(encoding="utf-8")) if src.exists() else []
        if not roles:
            continue
        s = soup(book / lang / f"{name}.html")
        if any(kind != "md" for kind, _ in roles):
            assert s.select(
                "span.pasted-text, span.pasted-inline, div.pasted-text, .pasted-inline"
            ), f"{lang}/{name}: uses glue but no pasted value in the page"
        # compared without whitespace: inline markup adds spaces around emphasis and code
        page_text = unsmart("".join("".join(p.get_text().split()) for p in prose(s)))
        for key in sorted({key for kind, key in roles if kind == "md"}):
            assert (name, key) in chosen, (
                f"{lang}/{name}: Markdown glue {key!r} is not a book.choose phrase in the claims "
                f"report (glue:md is kept for chosen phrases)")
            # the report lists the phrase's Markdown, where an entity (&lt;) stands for a
            # character of the page ("<unk>")
            start = unsmart(unescape("".join(chosen[name, key].split())))[:30]
            assert start in page_text, (
                f"{lang}/{name}: the chosen phrase {key!r} ({start!r}...) is not in the prose")


GLUE_ROLE_RE = re.compile(r"\{glue(?::(\w+))?\}`([^`]+)`")


def chosen_phrases(report: Path) -> dict[tuple[str, str], str]:
    """{(page, claim name): the phrase book.choose glued}, from an edition's claims report."""
    phrases = {}
    for section in soup(report).select("section.claims-chapter"):
        page = section["id"][len("claims-"):]
        for tr in section.select("table.claims-table tbody tr"):
            cells = [td.get_text(" ", strip=True) for td in tr.find_all("td")]
            if cells[1] in ("chosen", "按结果选择"):
                phrases[page, cells[0]] = cells[2]
    return phrases


def unsmart(text: str) -> str:
    """Text with Sphinx's smart quotes, dashes and ellipses turned back into what was typed."""
    for smart, typed in (("‘", "'"), ("’", "'"), ("“", '"'), ("”", '"'),
                         ("—", "---"), ("–", "--"), ("…", "...")):
        text = text.replace(smart, typed)
    return text


def prose(page: BeautifulSoup) -> list:
    """The paragraphs and list items of a page's text, outside its code cells and their outputs."""
    return [p for p in page.select("main p, main li") if not p.find_parent("div", class_="cell")]


@pytest.mark.parametrize("lang", LANGS)
def test_language_and_ui_strings(book, lang):
    for name in toc_files():
        s = soup(book / lang / f"{name}.html")
        assert s.html.get("lang") == HREFLANG[lang], (
            f"{lang}/{name}: <html lang={s.html.get('lang')}>")
    text = (book / lang / "mha-numpy.html").read_text(encoding="utf-8")
    for ui in ZH_UI if lang == "zh" else EN_UI:
        assert ui in text, f"{lang}: interface string {ui!r} missing"
    if lang == "zh":
        assert "Search" not in soup(book / lang / "search.html").title.get_text()


@pytest.mark.parametrize("lang", LANGS)
def test_hreflang_and_switcher(book, lang):
    other = OTHER[lang]
    for name in toc_files():
        s = soup(book / lang / f"{name}.html")
        alts = {link["hreflang"]: link["href"] for link in s.find_all("link", rel="alternate")
                if link.get("hreflang")}
        assert set(alts) == {"zh-CN", "en", "x-default"}, f"{lang}/{name}: {alts}"
        for code, href in alts.items():
            target = (book / lang / href).resolve()
            assert target.is_file(), f"{lang}/{name}: hreflang {code} -> missing {href}"
        assert alts[HREFLANG[other]].endswith(f"{other}/{name}.html")
        switch = s.select("a.book-lang-switch")
        assert len(switch) == 1, f"{lang}/{name}: language switcher missing"
        assert switch[0]["href"] == f"../{other}/{name}.html"
        assert ((book / lang / switch[0]["href"]).resolve()
                == (book / other / f"{name}.html").resolve())


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """What ``make export`` writes (the notebooks branch), as paths relative to its folder."""
    out = tmp_path_factory.mktemp("notebooks")
    return {p.relative_to(out).as_posix() for p in export_notebooks.export_all(out)}


@pytest.mark.parametrize("lang", LANGS)
def test_launch_buttons_point_at_exported_notebooks(book, lang, exported):
    """Every Colab and Binder link of every page opens, in the repository that repository.url
    names and on its notebooks branch, the notebook of that page and edition that ``make
    export`` produces."""
    repo = export_notebooks.repository_url().removeprefix("https://github.com/")
    branch = load_yaml(ROOT / "_config.yml")["repository"]["notebooks_branch"]
    pattern = re.compile(r'https://(?:colab\.research\.google\.com|mybinder\.org)/[^"]+')
    for name in notebooks(lang):
        links = {unescape(u) for u in pattern.findall(
            (book / lang / f"{name}.html").read_text(encoding="utf-8"))}
        target = f"{lang}/{name}.ipynb"
        assert target in exported, f"{lang}/{name}: make export writes no {target}"
        assert links == {f"https://colab.research.google.com/github/{repo}/blob/{branch}/{target}",
                         f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=tree/{target}"}, (
            lang, name, links)


def test_zh_search_finds_attention_chapters(book):
    idx = search_index("zh")
    docs = idx["docnames"]
    t = idx["terms"].get("注意力")
    hits = set(t if isinstance(t, list) else [t] if t is not None else [])
    tt = idx["titleterms"].get("注意力")
    hits |= set(tt if isinstance(tt, list) else [tt] if tt is not None else [])
    found = {docs[i] for i in hits}
    assert {"mha-numpy", "attention-pytorch"} <= found, f"注意力 -> {sorted(found)}"
    # jieba segmentation, not one term per run of Chinese characters
    assert "多头注意力" in idx["terms"] or "多头" in idx["terms"]


def test_en_search_finds_attention(book):
    idx = search_index("en")
    t = idx["terms"].get("attent")  # Porter stem of "attention"
    assert t, "no 'attention' in the en search index"


@pytest.mark.parametrize("lang", LANGS)
def test_execution_report_lists_every_notebook_ok(book, lang):
    s = soup(book / lang / "execution-report.html")
    table = s.find("table")
    assert table is not None, "execution report has no table"
    rows = {}
    for tr in table.find_all("tr")[1:]:
        cells = [td.get_text(strip=True) for td in tr.find_all("td")]
        if cells:
            rows[cells[0]] = cells
    expected = notebooks(lang)
    missing = [n for n in expected if n not in rows]
    assert not missing, f"{lang}: not in the execution report: {missing}"
    bad = {n: rows[n][-1] for n in expected if rows[n][-1] != "✅"}
    assert not bad, f"{lang}: notebooks without status ok: {bad}"


@pytest.mark.parametrize("lang", LANGS)
def test_bibliography(book, lang):
    s = soup(book / lang / "bibliography.html")
    text = s.get_text()
    assert "attention is all you need" in text.lower() and "Vaswani" in text
    # citations in chapters link into the bibliography page
    idx = (book / lang / "index.html").read_text(encoding="utf-8")
    assert "bibliography.html#id" in idx


@pytest.mark.parametrize("lang", LANGS)
def test_api_reference(book, lang):
    s = soup(book / lang / "api.html")
    names = {dt.get("id") for dt in s.select("dl.py dt[id]")}
    assert "d2lmini.attention.masked_softmax" in names or any(
        n and n.startswith("d2lmini.") for n in names)
    assert len(names) >= 10, f"{lang}: only {len(names)} documented objects"


@pytest.mark.parametrize("lang", LANGS)
def test_solutions_collapsed(book, lang):
    s = soup(book / lang / "mha-numpy.html")
    sols = s.select(".solution")
    assert sols, "no solutions rendered"
    assert all("dropdown" in sol.get("class", []) for sol in sols), "a solution is not collapsed"


def test_mathjax_local(book):
    for lang in LANGS:
        text = (book / lang / "mha-numpy.html").read_text(encoding="utf-8")
        m = re.search(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text)
        assert m and not m.group(1).startswith(("http:", "https:", "//")), (
            "MathJax not served locally")
        assert (book / lang / m.group(1).split("?")[0]).is_file()


def test_student_edition_has_no_solutions(book):
    build("--student", "--lang", "en")
    out = BUILD / "student" / "en"
    full = soup(HTML / "en" / "mha-numpy.html").select(".solution")
    assert full, "full edition has solutions"
    s = soup(out / "mha-numpy.html")
    assert not s.select(".solution"), "student edition still shows solutions"
    assert s.select(".exercise"), "student edition lost its exercises"
    # gated solutions (solution-start ... solution-end) take their code cells with them
    src = (ROOT / "book" / "en" / "mha-numpy.md").read_text(encoding="utf-8")
    if "{solution-start}" in src:
        n_full = len(soup(HTML / "en" / "mha-numpy.html").select("div.cell"))
        assert len(s.select("div.cell")) < n_full, "code of gated solutions is still in the page"


def test_zh_paragraphs_have_no_breaks_between_chinese_characters(book):
    """A soft line break of the source renders as a space; between two Chinese characters it
    must be gone (tools/build/book_sphinx/cjk.py joins them), while English keeps its spaces."""
    cjk = myst.CJK
    punct = "\u3000-\u303f\uff00-\uffef"  # full-width punctuation: no space beside it either
    gap = re.compile(f"[{cjk}]\\n[{cjk}]|[{punct}]\\n|\\n[{punct}]")
    for name in toc_files():
        for p in soup(book / "zh" / f"{name}.html").select("article p"):
            text = p.get_text()
            assert not gap.search(text), f"zh/{name}: a break between characters in {text[:80]!r}"


def test_no_page_shows_a_path_of_the_build_machine(book):
    bad = pages_showing_machine_paths(book)
    assert not bad, "pages show paths of this machine:\n" + "\n".join(bad)


def test_offline_build_says_what_it_used(book):
    # the nothing-at-all build read the project's own corpora, and the pages say so, in the
    # edition's language (the glued sentence and the loader's announcement)
    said = {"en": "offline corpus shipped with d2lmini", "zh": "随包附带的离线语料"}
    for lang in LANGS:
        text = soup(book / lang / "training-translation.html").get_text()
        assert said[lang] in text, lang
    zh_page = soup(book / "zh" / "training-translation.html")
    for code in zh_page.select("div.cell_input"):  # the code shows both editions' strings
        code.decompose()
    assert "offline corpus" not in zh_page.get_text()


def numbered_chapters() -> list[str]:
    """The chapters of the toc's numbered part, in order (chapter k is the k-th of the list)."""
    from tools.bookmeta import load_yaml

    toc = load_yaml(ROOT / "_toc.yml")
    part = next(p for p in toc["parts"] if p.get("numbered"))
    return [c["file"] for c in part["chapters"]]


def first_equation_number(page: Path) -> str | None:
    span = soup(page).select_one("span.eqno")
    return span.get_text(strip=True).rstrip("¶#").strip() if span else None


@pytest.mark.parametrize("lang", LANGS)
def test_equations_numbered_per_chapter(book, lang):
    """Equations are numbered (k.1), (k.2), ... in chapter k, not across the book."""
    wrong = []
    for k, name in enumerate(numbered_chapters(), start=1):
        number = first_equation_number(book / lang / f"{name}.html")
        if number is not None and number != f"({k}.1)":
            wrong.append(f"{name}: first equation is {number}, expected ({k}.1)")
    assert not wrong, f"{lang}: {wrong}"
    assert first_equation_number(book / lang / "mha-numpy.html") == "(2.1)"


@pytest.mark.parametrize("lang", LANGS)
def test_edit_and_issue_buttons(book, lang):
    """"Edit this page" opens the page's MyST source on the main branch; "open an issue" names
    the edition of the page."""
    for name in toc_files():
        text = (book / lang / f"{name}.html").read_text(encoding="utf-8")
        edit = re.findall(r'href="(https://github\.com/[^"]+/edit/[^"]+)"', text)
        assert edit and edit[0].endswith(f"/edit/main/book/{lang}/{name}.md"), (name, edit)
        issue = re.findall(r'href="(https://github\.com/[^"]+/issues/new\?[^"]+)"', text)
        assert issue and f"%2F{lang}%2F{name}.html" in issue[0], (name, issue)


@pytest.mark.parametrize("lang", LANGS)
def test_no_cell_shows_a_python_string(book, lang):
    """A cell's value shown as a Python string (a phrase of book.choose without ';', with its
    quotes, Markdown asterisks and HTML entities) is not text for a reader; the source check is
    tests/chapters/test_cell_values.py, this is what the pages show."""
    shown = []
    for name in toc_files():
        for out in soup(book / lang / f"{name}.html").select(
                "div.cell_output .output.text_plain pre, div.cell_output div.text_plain pre"):
            text = out.get_text().strip()
            if re.fullmatch(r"""(['"]).*\1""", text, re.S):
                shown.append(f"{name}: {text[:80]}")
    assert not shown, f"{lang}: cells show a Python string:\n" + "\n".join(shown)


def _heading_titles(html_root: Path, lang: str) -> set[str]:
    """The title of every section of the edition, as a {ref} renders it (no section number,
    no "#" link)."""
    titles = set()
    for name in toc_files():
        for h in soup(html_root / lang / f"{name}.html").select("article :is(h1,h2,h3,h4,h5,h6)"):
            for extra in h.select(".section-number, a.headerlink"):
                extra.decompose()
            titles.add(h.get_text().strip())
    return titles


def bare_section_titles(html_root: Path, lang: str) -> list[str]:
    """Cross-references in running text that render a section's title without the quotation
    marks of the book's style (“Title”; tools/build/book_sphinx/xrefs.py): for each, the page
    and the text around it. A reference that stands alone in its list item or table cell is no
    sentence and may stay bare; one with the author's own text is not a title."""
    titles = _heading_titles(html_root, lang)
    letter = re.compile(r"[^\W\d_]")
    bad = []
    for name in toc_files():
        article = soup(html_root / lang / f"{name}.html").select_one("article")
        for a in article.select("a.reference.internal"):
            text = a.get_text()
            if text.strip() not in titles or not a.select_one("span.std-ref"):
                continue
            block = a.find_parent(["p", "li", "td", "th", "dt", "dd", "caption",
                                   "figcaption"]) or a.parent
            inside = {id(s) for s in a.find_all(string=True)}
            rest = "".join(s for s in block.find_all(string=True) if id(s) not in inside)
            if not letter.search(rest):
                continue  # a list of sections, "1. Title" in a table: not a sentence
            before = next((s for s in a.find_all_previous(string=True) if s.strip()), "")
            after = next((s for s in a.find_all_next(string=True)
                          if id(s) not in inside and s.strip()), "")
            if not (before.rstrip().endswith("“") and after.lstrip().startswith("”")):
                bad.append(f"{name}: …{before[-20:]}[{text}]{after[:20]}…")
            elif lang == "zh" and (before.endswith((" “", "\n“"))
                                   or after.startswith(("” ", "”\n"))):
                bad.append(f"{name}: a space beside a full-width mark: …{before[-20:]}[{text}]"
                           f"{after[:20]}…")
    return bad


@pytest.mark.parametrize("lang", LANGS)
def test_section_titles_in_sentences_are_quoted(book, lang):
    """zh review M3: "见 可学习的还是固定的？。" -- a title a cross-reference renders inside a
    sentence is in quotation marks, “可学习的还是固定的？”, in both editions."""
    bad = bare_section_titles(book, lang)
    assert not bad, f"{lang}: {len(bad)} bare section titles:\n" + "\n".join(bad[:40])


def repeated_streams(notebook: Path) -> list[str]:
    """Cells of an executed notebook in which a stream output ends with the text of the later
    streams of the same name: what myst-nb's in-place merge left in the notebook it wrote
    (zh review M9: the word2vec log and the analogy table printed twice in the download)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    found = []
    for k, cell in enumerate(nb.cells):
        for name in ("stdout", "stderr"):
            texts = [o.text for o in cell.get("outputs", [])
                     if o.output_type == "stream" and o.name == name]
            for j in range(1, len(texts)):
                later = "".join(t.rstrip() + "\n" for t in texts[j:] if t.strip()).rstrip()
                if later and texts[j - 1].rstrip().endswith(later):
                    found.append(f"{notebook.name} cell {k}: {later[:60]!r} twice")
                    break
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_downloaded_notebooks_print_each_output_once(book, lang):
    """The ".ipynb" download of each executed page (``_sources/<page>.ipynb``) has every
    printed line once (``book_sphinx.reader.merge_copies``)."""
    notebooks_ = sorted((book / lang / "_sources").glob("*.ipynb"))
    assert notebooks_, f"{lang}: no executed notebook to download"
    bad = [line for nb in notebooks_ for line in repeated_streams(nb)]
    assert not bad, f"{lang}: outputs repeated in the downloaded notebooks:\n" + "\n".join(bad)


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_button_shown_only_when_the_pdf_exists(book, lang):
    """en review m4: ``make book`` builds no PDF, so its pages' PDF button would 404; it is
    rendered hidden until ``make pdf`` puts the PDF in the site (then it shows:
    ``tests/build/test_pdf.py``). The landing page lists only the PDFs that exist."""
    from tools.bookmeta import pdf_name

    for name in toc_files():
        links = soup(book / lang / f"{name}.html").select("a.book-pdf-link")
        assert len(links) == 1, f"{lang}/{name}: {len(links)} PDF buttons"
        target = (book / lang / links[0]["href"]).resolve()
        assert target.name == pdf_name(lang), (name, links[0]["href"])
        assert links[0].has_attr("hidden") != target.is_file(), (
            f"{lang}/{name}: PDF button {'hidden' if links[0].has_attr('hidden') else 'shown'}, "
            f"the PDF {'exists' if target.is_file() else 'does not exist'}")
    landing = (book / "index.html").read_text(encoding="utf-8")
    assert (f'href="pdf/{pdf_name(lang)}"' in landing) == (book / "pdf" / pdf_name(lang)).is_file()
