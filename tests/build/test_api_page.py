"""The API page of each edition lists every public module of d2lmini (``d2lmini.MODULES``, then
the book's plumbing, ``d2lmini.book.MODULES``).

``book/<lang>/api.md`` holds a ``d2lmini-modules`` marker that
``tools/build/book_sphinx/apipage.py`` expands into one autodoc section per module when the book
is built; the built pages are checked in ``tests/build/test_claims_report.py``.
"""
from __future__ import annotations

import re

import pytest
from tools.build.book_sphinx import apipage
from chapter_source import BOOK, LANGS

import d2lmini


def module_names() -> list[str]:
    return [m.__name__.removeprefix("d2lmini.")
            for m in (*d2lmini.MODULES, *d2lmini.book.MODULES)]


@pytest.mark.parametrize("lang", LANGS)
def test_api_page_is_generated_from_the_package(lang):
    text = (BOOK / lang / "api.md").read_text(encoding="utf-8")
    assert len(apipage.MARKER.findall(text)) == 1, f"{lang}/api.md: no d2lmini-modules marker"
    # written by hand beside the marker, a module would be documented twice (-W fails)
    assert "automodule::" not in text, f"{lang}/api.md documents a module by hand"
    page = apipage.expand(text)
    documented = re.findall(r"^\.\. automodule:: d2lmini\.([\w.]+)$", page, re.M)
    assert documented == module_names()
    for name in module_names():
        label = name.replace("_", "-").replace(".", "-")
        assert f"(sec-api-{label})=\n## `d2lmini.{name}`" in page


def test_every_module_with_a_public_name_is_in_modules():
    import pkgutil

    found = {m.name for m in pkgutil.iter_modules(d2lmini.__path__)
             if not m.name.startswith("_") and m.name != "book"}
    found |= {f"book.{m.name}" for m in pkgutil.iter_modules(d2lmini.book.__path__)
              if not m.name.startswith("_")}
    assert set(module_names()) == found, "d2lmini.MODULES and the package's modules differ"
    assert "book.claims" in module_names() and "metrics" in module_names()


def test_expand_rejects_a_bad_name_and_leaves_other_pages_alone():
    assert apipage.expand("no marker here\n") == "no marker here\n"
    with pytest.raises(ValueError, match="not a d2lmini module name"):
        apipage.module_sections(["utils", "../x"])
    out = apipage.expand("# API\n\n```{d2lmini-modules}\n```\n", ["utils", "claims"])
    assert out.count(".. automodule::") == 2 and out.startswith("# API\n\n(sec-api-utils)=")
