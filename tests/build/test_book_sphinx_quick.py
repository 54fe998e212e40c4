"""Quick checks of three pieces of ``tools/build/book_sphinx`` without building the book (``make
check`` runs them; ``test_book_build.py`` checks the same on the built pages): section titles
quoted in sentences (``xrefs``), the executed notebook's outputs left as printed and the PDF
button hidden until the PDF exists (``reader``)."""
from __future__ import annotations

import re
from pathlib import Path

import jinja2
import nbformat
import pytest
from bs4 import BeautifulSoup

from tools.build.book_sphinx import reader

TEMPLATES = Path(reader.__file__).parent / "templates"


def _build(tmp_path: Path, lang: str, index: str) -> BeautifulSoup:
    from sphinx.cmd.build import build_main

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "extensions = ['tools.build.book_sphinx.xrefs']\n"
        f"book_lang = {lang!r}\nhtml_theme = 'basic'\n", encoding="utf-8")
    (src / "index.rst").write_text(index, encoding="utf-8")
    (src / "other.rst").write_text(".. _sec-other:\n\nLearned or fixed?\n=================\n\n"
                                   "Text.\n", encoding="utf-8")
    rc = build_main(["-q", "-b", "html", str(src), str(tmp_path / "out")])
    assert rc == 0
    return BeautifulSoup((tmp_path / "out" / "index.html").read_text(encoding="utf-8"),
                         "html.parser")


INDEX = """Title
=====

.. toctree::

   other

{para}

1. :ref:`sec-other`

See :ref:`the other page <sec-other>` and 《:ref:`sec-other`》 too.
"""


@pytest.mark.parametrize("lang, para, expected", [
    ("en", "The question is the subject of :ref:`sec-other`.",
     "The question is the subject of “Learned or fixed?”."),
    ("zh", "能否外推，见 :ref:`sec-other` 。", "能否外推，见“Learned or fixed?”。"),
])
def test_a_section_title_in_a_sentence_is_quoted(tmp_path, lang, para, expected):
    page = _build(tmp_path, lang, INDEX.format(para=para))
    texts = [re.sub(r"\s+", " ", p.get_text()).strip() for p in page.select("p")]
    assert expected in texts, texts
    # alone in a list item, with its own text, or quoted by the author: left as written
    assert [li.get_text(strip=True) for li in page.select("ol li")] == ["Learned or fixed?"]
    assert "See the other page and 《Learned or fixed?》 too." in texts


def test_downloaded_notebook_keeps_the_streams_the_page_merges():
    from myst_nb.core.utils import coalesce_streams

    outputs = [nbformat.v4.new_output("stream", name="stdout", text="epoch 1\n"),
               nbformat.v4.new_output("stream", name="stdout", text="epoch 2\n")]
    merged = reader.merge_copies(coalesce_streams)(outputs)
    assert [o.text for o in merged] == ["epoch 1\nepoch 2\n"]  # the page: one block
    assert [o.text for o in outputs] == ["epoch 1\n", "epoch 2\n"]  # the notebook: unchanged
    twice = reader.merge_copies(reader.merge_copies(coalesce_streams))
    assert twice.merges_copies and twice(outputs)[0].text == "epoch 1\nepoch 2\n"


def test_pdf_button_hidden_until_make_pdf_shows_it(tmp_path):
    template = jinja2.Template((TEMPLATES / "pdf-link.html").read_text(encoding="utf-8"))
    page = tmp_path / "zh" / "index.html"
    page.parent.mkdir()
    html = template.render(book_pdf_url="../pdf/transformer-book-zh.pdf",
                           book_pdf_title="PDF", book_pdf_hidden=True)
    page.write_text(f"<html><body>{html}</body></html>", encoding="utf-8")
    link = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one("a")
    assert link.has_attr("hidden")
    assert not reader.pdf_built(tmp_path / "zh", "transformer-book-zh.pdf")

    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "transformer-book-zh.pdf").write_bytes(b"%PDF-1.5\n")
    assert reader.pdf_built(tmp_path / "zh", "transformer-book-zh.pdf")
    assert reader.show_pdf_buttons(tmp_path / "zh") == 1
    link = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one("a")
    assert not link.has_attr("hidden") and link["href"] == "../pdf/transformer-book-zh.pdf"
    shown = template.render(book_pdf_url="x.pdf", book_pdf_title="PDF", book_pdf_hidden=False)
    assert " hidden" not in shown


def test_landing_page_lists_only_built_pdfs(tmp_path):
    from tools.build.build_book import write_root_index

    write_root_index(tmp_path)
    assert ".pdf" not in (tmp_path / "index.html").read_text(encoding="utf-8")
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "transformer-book-en.pdf").write_bytes(b"%PDF-1.5\n")
    write_root_index(tmp_path)
    text = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'href="pdf/transformer-book-en.pdf"' in text and "transformer-book-zh.pdf" not in text
    write_root_index(tmp_path, student=True)  # the student site: its own PDFs, none built
    assert ".pdf" not in (tmp_path / "index.html").read_text(encoding="utf-8")


def test_a_build_copies_the_pdfs_built_earlier_into_its_site(tmp_path):
    """The pages show the button when the PDF is in ``_build/pdf/`` (``reader.pdf_built``):
    then every build puts it into its site, where the button points."""
    from tools.build.build_book import copy_pdfs

    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "transformer-book-zh-student.pdf").write_bytes(b"%PDF-1.5\n")
    (tmp_path / "student" / "zh").mkdir(parents=True)
    assert reader.pdf_built(tmp_path / "student" / "zh", "transformer-book-zh-student.pdf")
    copy_pdfs(tmp_path / "student", student=True, build=tmp_path)
    assert (tmp_path / "student" / "pdf" / "transformer-book-zh-student.pdf").is_file()
    assert not (tmp_path / "student" / "pdf" / "transformer-book-en-student.pdf").exists()
