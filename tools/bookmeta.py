"""Facts about the book that the build, the Sphinx extensions, the exporter and the tests share.

One place for the editions (their order, their HTML ``lang`` / hreflang codes, their Sphinx
language and title) and for reading ``_toc.yml``.
"""
from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
TOC = ROOT / "_toc.yml"

#: The editions, in the order they are built.
LANGS = ("zh", "en")
#: ``<html lang>`` and ``hreflang`` of each edition.
HREFLANG = {"zh": "zh-CN", "en": "en"}
#: Sphinx's ``language`` setting of each edition (it selects the translated interface strings).
SPHINX_LANGUAGE = {"zh": "zh_CN", "en": "en"}
#: The book's title in each edition.
TITLES = {"zh": "可执行的 Transformer", "en": "The Transformer, executable"}
#: The book's authors as each edition names them (the page footer and the PDF's title page).
AUTHORS = {"zh": "Transformer 教材作者", "en": "The Transformer book authors"}
#: The language switcher's label and tooltip, in the language it switches to.
SWITCH_LABEL = {"zh": "中文", "en": "English"}
SWITCH_TITLE = {"zh": "切换到中文版", "en": "Read this page in English"}
#: Seconds a chapter's cells may take on a 2-core CI machine (CONTRIBUTING.md, "Execution
#: budget"): the execution report shows each chapter's time against it and flags one over it.
BUDGET_S = 60
#: Chapters with a budget of their own: chapter 6 adds about 3 minutes of training, chapter 8
#: about 5 (its ablations: about 60 small trainings, two at a time, shared by the editions).
CHAPTER_BUDGET_S = {"training-translation": 60 + 180, "modern-transformer": 60 + 300}


def budget_s(page: str) -> int:
    """The execution budget of ``page`` (a file name of ``_toc.yml``), in seconds."""
    return CHAPTER_BUDGET_S.get(page, BUDGET_S)


def load_yaml(path: Path) -> dict:
    """A YAML file as a dict (empty for an empty file)."""
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def chapter_numbers(toc: dict | Path = TOC) -> dict[str, int]:
    """The chapter number of every file in a ``numbered: true`` part of the table of contents
    (1, 2, ... through the numbered parts, in order), as Sphinx numbers them; files in
    unnumbered parts (the appendix, the back matter, the root page) are not in the dict."""
    if not isinstance(toc, dict):
        toc = load_yaml(toc)
    numbers: dict[str, int] = {}
    for part in toc.get("parts", []):
        if part.get("numbered"):
            for entry in part.get("chapters", []):
                numbers[entry["file"]] = len(numbers) + 1
    return numbers


def toc_files(toc: dict | Path = TOC) -> list[str]:
    """Every file name of a jb-book ``_toc.yml`` (a parsed dict or a path), root first."""
    if not isinstance(toc, dict):
        toc = load_yaml(toc)
    names = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                names.append(entry["file"])
            for key in ("sections", "chapters", "parts"):
                walk(entry.get(key))

    for key in ("parts", "chapters"):
        walk(toc.get(key))
    return names


def is_notebook(path: Path) -> bool:
    """A page the build executes: a MyST notebook with a kernelspec and code cells."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return "kernelspec:" in text and "{code-cell}" in text


def notebooks(lang: str, toc: dict | Path = TOC) -> list[str]:
    """The pages of the table of contents that are executed notebooks, in toc order."""
    return [name for name in toc_files(toc) if is_notebook(BOOK / lang / f"{name}.md")]


def chapters(lang: str = "en", toc: dict | Path = TOC) -> list[str]:
    """The chapters and appendices, in toc order: the executed notebooks of the table of
    contents other than its root (the back matter, glossary to instructors, executes nothing).
    ``_toc.yml`` is the one list of chapters; every test and tool takes it from here."""
    if not isinstance(toc, dict):
        toc = load_yaml(toc)
    return [name for name in notebooks(lang, toc) if name != toc["root"]]


def pdf_name(lang: str, student: bool = False) -> str:
    """File name of an edition's PDF (``tools/build/build_pdf.py``); the pages link to it."""
    return f"transformer-book-{lang}" + ("-student" if student else "") + ".pdf"
