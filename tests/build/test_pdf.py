"""The PDF of each edition (``python -m tools.build.build_pdf``), with and without the solutions.

Built once per session after the HTML (whose jupyter cache it reads: nothing is executed), then
read with poppler's tools: page count, embedded CJK fonts, the text where it belongs, no
unresolved reference, and every figure of the HTML edition in the PDF.
"""
from __future__ import annotations

import functools
import re
import subprocess
import sys

import pytest
from tools.classroom import exercises
from tools.bookmeta import load_yaml, pdf_name
from bs4 import BeautifulSoup
from built_book import BUILD, HTML, LANGS, ROOT, build, nothing_at_all_env, toc_files

pytestmark = [pytest.mark.pdf, pytest.mark.book]

PDF = BUILD / "pdf"
LATEX = BUILD / "latex"
# pages of the full PDF: measured 197 (zh) and 181 (en) in 2026; a range, so that prose edits pass
# and a lost chapter or a page per image does not
PAGES = {"zh": (140, 400), "en": (130, 370)}
CHAPTER_LABEL = {"zh": re.compile(r"^第\s*(\d+)\s*章$"), "en": re.compile(r"^Chapter (\d+)$")}
SOLUTION_TITLE = {"zh": "解答练习", "en": "Solution to Exercise"}  # xeCJK drops the space
TERM = {"zh": "多头注意力", "en": "multi-head attention"}


@functools.cache
def _build_pdfs() -> str:
    build()  # the HTML first: its jupyter cache is the PDF's
    proc = subprocess.run([sys.executable, "-m", "tools.build.build_pdf", "--build-dir",
                           str(BUILD)], cwd=ROOT, env=nothing_at_all_env(), capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"build_pdf.py failed (exit {proc.returncode}):\n"
                             f"{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}")
    return proc.stdout


@pytest.fixture(scope="session")
def pdf_log():
    return _build_pdfs()


def _text(path) -> list[str]:
    """The text of each page (pdftotext, reading order)."""
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True,
                         text=True, check=True).stdout
    return out.split("\f")


def _pages(path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True,
                          check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def _chapters() -> list[str]:
    """The numbered chapters: the first part of _toc.yml."""
    toc = load_yaml(ROOT / "_toc.yml")
    return [c["file"] for c in toc["parts"][0]["chapters"]]


def _chapter_text(lang: str, pages: list[str]) -> dict[str, str]:
    """Text of each numbered chapter, from its opening page ("第 N 章" / "Chapter N") to the
    next chapter's."""
    starts = {}
    for i, page in enumerate(pages):
        for line in page.splitlines()[:6]:
            m = CHAPTER_LABEL[lang].match(line.strip())
            if m and int(m.group(1)) not in starts:
                starts[int(m.group(1))] = i
    names = _chapters()
    assert sorted(starts) == list(range(1, len(names) + 1)), f"{lang}: chapter openings {starts}"
    bounds = [starts[k] for k in sorted(starts)] + [len(pages)]
    return {names[k]: "\n".join(pages[bounds[k]:bounds[k + 1]]) for k in range(len(names))}


def _normalise(text: str) -> str:
    text = re.sub(r"-\n(?=[a-z])", "-", text)  # a hyphenated compound broken at the hyphen
    text = re.sub(r"(?<=[\u4e00-\u9fff])\n(?=[\u4e00-\u9fff])", "", text)
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("lang", LANGS)
def test_pdfs_exist_with_a_sensible_page_count(pdf_log, lang):
    full, student = PDF / pdf_name(lang), PDF / pdf_name(lang, student=True)
    assert full.is_file() and student.is_file()
    lo, hi = PAGES[lang]
    n_full, n_student = _pages(full), _pages(student)
    assert lo <= n_full <= hi, f"{full.name}: {n_full} pages, expected {lo}..{hi}"
    assert n_student < n_full, f"student edition {n_student} pages, full {n_full}"


def test_nothing_executed_after_the_html(pdf_log):
    # build_pdf.py compares the cache records themselves (a re-executed notebook replaces its
    # record) and warns when the HTML read another cache folder than the PDF
    assert "notebooks executed" not in pdf_log, pdf_log
    assert "read another jupyter cache" not in pdf_log, pdf_log


def test_zh_pdf_embeds_a_cjk_font(pdf_log):
    fonts = subprocess.run(["pdffonts", str(PDF / pdf_name("zh"))], capture_output=True,
                           text=True, check=True).stdout.splitlines()[2:]
    cjk = [ln for ln in fonts if re.search(r"Noto(Serif|Sans)CJK", ln)]
    assert cjk, "no Noto CJK font in the zh PDF:\n" + "\n".join(fonts)
    assert all(ln.split()[-5] == "yes" for ln in cjk), "a CJK font is not embedded"


@pytest.mark.parametrize("lang", LANGS)
def test_text_where_it_belongs(pdf_log, lang):
    pages = _text(PDF / pdf_name(lang))
    chapters = {k: _normalise(v) for k, v in _chapter_text(lang, pages).items()}
    term = TERM[lang]
    assert term in chapters["mha-numpy"].lower(), f"{lang}: {term!r} not in the NumPy chapter"
    assert term in chapters["attention-pytorch"].lower()
    full = _normalise("\n".join(pages))
    if lang == "zh":
        assert re.search(r"图 \d+\.\d+", full), "no Chinese figure caption (图 N.M)"
        assert "第 1 章" in full and "目录" in full and "参考文献" in full
    else:
        assert re.search(r"Fig\. \d+\.\d+", full) and "Bibliography" in full
    assert "Vaswani" in full, "the bibliography is missing"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("student", [False, True], ids=["full", "student"])
def test_no_unresolved_references(pdf_log, lang, student):
    name = pdf_name(lang, student=student)
    text = "\n".join(_text(PDF / name))
    assert "??" not in text, f"{name}: unresolved reference (??)"
    variant = "student" if student else "full"
    log = (LATEX / lang / variant / name.replace(".pdf", ".log")).read_text(errors="replace")
    assert not re.search(r"There were undefined (references|citations)|Reference `[^']+' on page "
                         r"\d+ undefined|Citation `[^']+' on page \d+ undefined", log), name
    missing = sorted(set(re.findall(r"Missing character: There is no (\S+)", log)))
    assert not missing, f"{name}: characters without a glyph in their font: {missing}"


@pytest.mark.parametrize("lang", LANGS)
def test_exercises_with_and_without_solutions(pdf_log, lang):
    full = _normalise("\n".join(_text(PDF / pdf_name(lang))))
    student = _normalise("\n".join(_text(PDF / pdf_name(lang, student=True))))
    n_exercises = sum(
        (ROOT / "book" / lang / f"{c}.md").read_text(encoding="utf-8").count("{exercise}")
        for c in toc_files())
    assert full.count(SOLUTION_TITLE[lang]) == n_exercises
    assert SOLUTION_TITLE[lang] not in student
    # the exercises themselves stay, numbered as on the web site and in the notebooks:
    # per chapter (6.1, 6.2, ...), and through the appendix (1, 2, ...)
    label = "练习" if lang == "zh" else "Exercise"
    numbers = set(re.findall(rf"{label} (\d+(?:\.\d+)?)", student))
    expected = set()
    for c in toc_files():
        page = ROOT / "book" / lang / f"{c}.md"
        prefix, first = exercises.numbering(page)
        count = page.read_text(encoding="utf-8").count("{exercise}")
        expected |= {f"{prefix}{first + k}" for k in range(count)}
    assert len(expected) == n_exercises and expected <= numbers, sorted(expected - numbers)


def _tex_images(lang: str) -> dict[str, set[str]]:
    """Images of each page in the LaTeX source: {docname: {image base names}}."""
    tex = (LATEX / lang / "full" / pdf_name(lang).replace(".pdf", ".tex")).read_text()
    parts = re.split(r"\\label\{\\detokenize\{([\w-]+)::doc\}\}", tex)
    images: dict[str, set[str]] = {}
    for doc, body in zip(parts[1::2], parts[2::2]):
        names = re.findall(r"\\sphinxincludegraphics(?:\[[^\]]*\])?\{\{([^}]+)\}\.pdf\}", body)
        images.setdefault(doc, set()).update(names)
    return images


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_of_the_html_is_in_the_pdf(pdf_log, lang):
    tex = _tex_images(lang)
    problems = []
    for name in toc_files():
        soup = BeautifulSoup((HTML / lang / f"{name}.html").read_text(encoding="utf-8"),
                             "html.parser")
        html = {re.sub(r"\.\w+$", "", img["src"].rsplit("/", 1)[-1])
                for img in soup.select("article img:not(.d2l-vega-static)")}
        # an interactive figure (book.interactive) is a live chart in the HTML and its static
        # figure in the PDF: one image of the PDF per interactive figure, beyond the HTML's
        live = len(soup.select("article div.d2l-vega"))
        printed = tex.get(name, set())
        if not html <= printed or len(printed - html) != live:
            problems.append(f"{name}: only in HTML {sorted(html - printed)}, only in PDF "
                            f"{sorted(printed - html)} ({live} interactive figures)")
    assert not problems, f"{lang}:\n" + "\n".join(problems)
    # and LaTeX found every file (latexmk would have stopped otherwise): the PDF has images
    listed = subprocess.run(["pdfimages", "-list", str(PDF / pdf_name(lang))],
                            capture_output=True, text=True, check=True).stdout
    assert len(listed.splitlines()) > 2


@pytest.mark.parametrize("lang", LANGS)
def test_pages_link_to_the_pdf(pdf_log, lang):
    for name in toc_files():
        soup = BeautifulSoup((HTML / lang / f"{name}.html").read_text(encoding="utf-8"),
                             "html.parser")
        links = soup.select("a.book-pdf-link")
        assert len(links) == 1, f"{lang}/{name}: PDF button missing"
        assert not links[0].has_attr("hidden"), f"{lang}/{name}: PDF button still hidden"
        target = (HTML / lang / links[0]["href"]).resolve()
        assert target.is_file() and target.name == pdf_name(lang), (name, links[0]["href"])
    landing = (HTML / "index.html").read_text(encoding="utf-8")
    assert f'href="pdf/{pdf_name(lang)}"' in landing
