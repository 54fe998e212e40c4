#!/usr/bin/env python
"""A new chapter in both editions, with every part the book's checks ask of a chapter.

    make chapter NAME=mixture-of-experts TITLE="Mixture of experts" TITLE_ZH="混合专家模型"
    python -m tools.authoring.new_chapter mixture-of-experts --title "..." --title-zh "..."

Writes ``book/en/<name>.md`` and ``book/zh/<name>.md`` from ``templates/`` (front matter, the
chapter's label, an import cell, a measured example whose numbers are glued and whose sentence
is guarded by ``book.claim``, a figure with alt text and labels in both languages, a summary,
three graded exercises with public checks and hidden tests, one exercise with a rubric),
``tools/classroom/cases/<name>.yml`` (a typical mistake and a typed-in answer per graded
exercise) and the chapter's entry at the end of the numbered part of ``_toc.yml``, so that it is
the next chapter (its glue and claim names start with ``ch<number>_``). The scaffold passes the
checks of ``make check`` and builds in both editions; the author then replaces the example with
the chapter's subject (CONTRIBUTING.md, "Adding a chapter").
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tools.bookmeta import BOOK, LANGS, ROOT, TOC, chapter_numbers, load_yaml, toc_files

TEMPLATES = Path(__file__).resolve().parent / "templates"
CASES = ROOT / "tools" / "classroom" / "cases"
NAME_RE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


class ChapterError(ValueError):
    """The name is not a new chapter file name, or the table of contents cannot take it."""


def check_name(name: str, root: Path = ROOT) -> None:
    """Raise :class:`ChapterError` unless ``name`` is kebab-case and no page has it yet."""
    if not NAME_RE.fullmatch(name or ""):
        raise ChapterError(f"the name must be kebab-case, like mixture-of-experts; got {name!r}")
    if name in toc_files(root / TOC.name):
        raise ChapterError(f"{name!r} is already in _toc.yml")
    taken = [p for p in (root / "book" / lang / f"{name}.md" for lang in LANGS) if p.exists()]
    if taken:
        raise ChapterError(f"{taken[0].relative_to(root)} exists already")


def add_to_toc(toc_text: str, name: str) -> str:
    """``_toc.yml``'s text with ``- file: <name>`` after the last chapter of the numbered part
    (the line edit keeps the file's comments)."""
    lines = toc_text.splitlines(keepends=True)
    numbered = next((i for i, ln in enumerate(lines) if ln.strip() == "- numbered: true"), None)
    if numbered is None:
        raise ChapterError("_toc.yml has no numbered part (- numbered: true)")
    last = None
    for i in range(numbered + 1, len(lines)):
        if lines[i].lstrip().startswith("- ") and not lines[i].lstrip().startswith("- file:"):
            break  # the next part
        if lines[i].lstrip().startswith("- file:"):
            last = i
    if last is None:
        raise ChapterError("the numbered part of _toc.yml has no chapter to follow")
    indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
    lines.insert(last + 1, f"{indent}- file: {name}\n")
    return "".join(lines)


def fill(template: str, name: str, number: int, title_en: str, title_zh: str) -> str:
    return (template.replace("@@NAME@@", name).replace("@@PREFIX@@", f"ch{number}")
            .replace("@@TITLE_EN@@", title_en).replace("@@TITLE_ZH@@", title_zh))


def create(name: str, title_en: str, title_zh: str, root: Path = ROOT) -> list[Path]:
    """Write the new chapter's files under ``root``; returns them (the toc first)."""
    check_name(name, root)
    toc = root / TOC.name
    toc.write_text(add_to_toc(toc.read_text(encoding="utf-8"), name), encoding="utf-8")
    number = chapter_numbers(load_yaml(toc))[name]
    written = [toc]
    for lang in LANGS:
        dest = root / BOOK.name / lang / f"{name}.md"
        text = (TEMPLATES / f"{lang}.md").read_text(encoding="utf-8")
        dest.write_text(fill(text, name, number, title_en, title_zh), encoding="utf-8")
        written.append(dest)
    cases = root / CASES.relative_to(ROOT) / f"{name}.yml"
    cases.write_text(fill((TEMPLATES / "cases.yml").read_text(encoding="utf-8"), name, number,
                          title_en, title_zh), encoding="utf-8")
    return written + [cases]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", help="the chapter's file name, kebab-case (mixture-of-experts)")
    p.add_argument("--title", default=None, help="the English title (default: from the name)")
    p.add_argument("--title-zh", default=None, help="the Chinese title (default: the English)")
    args = p.parse_args(argv)
    title_en = args.title or args.name.replace("-", " ").capitalize()
    try:
        written = create(args.name, title_en, args.title_zh or title_en)
    except ChapterError as e:
        print(f"[new_chapter] {e}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print("next: replace the example with the chapter's subject (CONTRIBUTING.md, "
          "'Adding a chapter'); make check; python -m tools.build.build_book --only "
          f"{args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
