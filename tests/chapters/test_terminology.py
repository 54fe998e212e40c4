"""One term per concept: the glossary is the single source of the book's terminology.

The glossary of each edition (``book/<lang>/glossary.md``) has a table of terms (``:name:
tab-glossary-terms``: the term, its counterpart in the other language, a definition, and the
section where it first appears). The Chinese glossary also has tables with ``:class:
terms-to-avoid``: each row names a variant the book does not use and the term it uses instead
(mistranslations, and synonyms that would give one concept two names). The tests:

* no Chinese page (prose, captions, headings) and no Chinese figure (``book/zh/img/*.svg``) uses
  an avoided variant;
* every term of each glossary occurs in a chapter of its edition (a glossary that lists terms the
  book never uses cannot be "the terms the book uses");
* each "first appears" pointer names a label defined in the chapter where the term first occurs,
  chapters taken in table-of-contents order;
* every preferred term of the synonym table is a term of the glossary.

What counts as prose is ``chapter_source.plain_prose``: code cells, math, inline code and role
targets are not prose. Inside prose, a parenthesis that holds no Chinese character (an English
gloss such as ``暂退法（dropout）``) may name the English term, and an avoided variant that is
part of a preferred term (``评分`` inside ``评分函数``) is not a use of the variant.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

if __name__ == "__main__":  # run as a script (--write): the paths conftest.py gives the tests
    import sys

    sys.path[:0] = [str(Path(__file__).resolve().parents[1]),
                    str(Path(__file__).resolve().parents[2])]

from tools.bookmeta import toc_files
from tools import myst
from chapter_source import (BOOK, HEADING_RE, LABEL_RE, directive_labels,
                            is_chapter, plain_prose)

TERMS_TABLE = "tab-glossary-terms"
VARIANTS_TABLE = "tab-glossary-variants"
AVOID_CLASS = "terms-to-avoid"
CJK = myst.HAN
# Terms a plain substring search cannot locate: one Chinese character (值 is also in 数值, 键 in
# 关键) or an everyday English word ("value", "key"). They are still required to occur somewhere.
NO_FIRST_CHECK = {"zh": {"值", "键"}, "en": {"key", "value"}}
# Words that contain an avoided variant across a word boundary and are not a use of it
# (区分 + 词尾 holds 分词).
NOT_A_USE = ("区分词",)
# Where the text introduces a concept before it uses the glossary's name for it, the other
# wording counts as its first appearance ("the gradients are clipped" introduces gradient
# clipping; "PyTorch's fused `scaled_dot_product_attention`" a fused attention kernel).
FIRST_ALIASES = {
    "en": {"gradient clipping": ("clipped", "clipping"), "fused attention kernel": ("fused",),
           "subword": ("sub-word",), "masking": ("masked",)},
    "zh": {"融合注意力算子": ("融合算子",)},
}


# ---------------------------------------------------------------------------- the glossary
def list_tables(text: str) -> list[dict]:
    """Every ``{list-table}`` of a MyST page: its options and its rows (lists of cell texts)."""
    tables = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^([`:]{3,})\{list-table\}", lines[i])
        if not m:
            i += 1
            continue
        fence, options, rows = m.group(1), {}, []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            ln = lines[j]
            om = re.match(r"^:([A-Za-z-]+):\s*(.*)$", ln)
            if om and not rows:
                options[om.group(1)] = om.group(2).strip()
            elif ln.startswith("* - "):
                rows.append([ln[4:].strip()])
            elif ln.startswith("  - ") and rows:
                rows[-1].append(ln[4:].strip())
            elif ln.startswith("    ") and rows:  # a cell continued on the next line
                rows[-1][-1] += " " + ln.strip()
            j += 1
        header = int(options.get("header-rows", "0") or 0)
        tables.append({"options": options, "rows": rows[header:], "line": i + 1})
        i = j + 1
    return tables


def term_key(cell: str) -> str:
    """The term itself: the cell without a parenthesised gloss or alias, without markup."""
    cell = re.sub(r"\*\*|`", "", cell)
    return re.split(r"（| \(", cell, maxsplit=1)[0].strip()


def glossary_terms(lang: str, text: str | None = None) -> list[dict]:
    """Rows of the glossary's term table: term, other-language term and the pointer label."""
    text = text if text is not None else (BOOK / lang / "glossary.md").read_text(encoding="utf-8")
    tables = [t for t in list_tables(text) if t["options"].get("name") == TERMS_TABLE]
    assert len(tables) == 1, f"{lang}/glossary.md: expected one table named {TERMS_TABLE}"
    rows = []
    for row in tables[0]["rows"]:
        assert len(row) == 4, f"{lang}/glossary.md: a row without 4 cells: {row}"
        ref = re.search(r"\{ref\}`(?:[^`<]*<)?([^`>]+)>?`", row[3])
        rows.append({"term": row[0], "key": term_key(row[0]), "other": row[1],
                     "label": ref.group(1) if ref else None})
    return rows


def avoided_terms(text: str) -> list[tuple[str, str, str | None]]:
    """(avoided variant, preferred term, table name) for every row of a terms-to-avoid table."""
    out = []
    for t in list_tables(text):
        if AVOID_CLASS in t["options"].get("class", "").split():
            for row in t["rows"]:
                out.append((term_key(row[0]), term_key(row[-1]), t["options"].get("name")))
    return out


ZH_GLOSSARY = (BOOK / "zh" / "glossary.md").read_text(encoding="utf-8")
AVOIDED = avoided_terms(ZH_GLOSSARY)
PREFERRED_KEYS = sorted({r["key"] for r in glossary_terms("zh", ZH_GLOSSARY)}, key=len,
                        reverse=True)


# ---------------------------------------------------------------------------- finding terms
def _pattern(term: str) -> re.Pattern:
    """Latin terms match whole words, case-insensitively; Chinese terms match anywhere."""
    if re.search(f"[{CJK}]", term):
        return re.compile(re.escape(term))
    return re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(term)}(?![A-Za-z0-9_])", re.I)


def _without_glosses(line: str) -> str:
    """Blank out parentheses holding no Chinese character: English glosses, formulas."""
    return re.sub(rf"（[^（）{CJK}]*）", lambda m: " " * len(m.group()), line)


def _without_preferred(line: str, preferred: list[str]) -> str:
    for term in preferred:
        line = _pattern(term).sub(lambda m: "\0" * len(m.group()), line)
    return line


def joined_prose(text: str, blank: set[int] = frozenset()) -> tuple[str, list[int]]:
    """The prose of ``text`` with each paragraph on one line, and the source line of each character.

    A line break inside a paragraph becomes nothing between Chinese characters and a space
    otherwise, so that a term broken across two source lines is still found.
    """
    out, where = [], []
    prev = ""
    for n, line in enumerate(plain_prose(text).splitlines(), start=1):
        line = "" if n in blank else line.strip()
        if not line:
            if prev:
                out.append("\n")
                where.append(n)
            prev = ""
            continue
        if prev:
            wide = f"[{CJK}\u3000-\u303f\uff00-\uffef]"
            sep = "" if re.match(wide, prev[-1]) or re.match(wide, line[0]) else " "
            out.append(sep)
            where.extend([n] * len(sep))
        out.append(line)
        where.extend([n] * len(line))
        prev = line
    return "".join(out), where


def avoided_uses(text: str, avoided=None, preferred=None) -> list[tuple[int, str, str]]:
    """(line, variant, preferred) for each use of an avoided variant in the prose of ``text``."""
    avoided = AVOIDED if avoided is None else avoided
    preferred = PREFERRED_KEYS if preferred is None else preferred
    prose, where = joined_prose(text, blank=_avoid_block_lines(text) | _english_cells(text))
    return sorted({(where[i], bad, good)
                   for i, bad, good in find_avoided(prose, avoided, preferred)})


def find_avoided(prose: str, avoided, preferred) -> list[tuple[int, str, str]]:
    """(offset, variant, preferred) for each avoided variant in a piece of prose."""
    prose = _without_glosses(prose)
    prose = _without_preferred(prose, list(NOT_A_USE))
    hits = []
    for bad, good, _ in avoided:
        # a preferred term that contains the variant is not a use of it (评分 in 评分函数)
        masked = _without_preferred(prose, [t for t in preferred if bad in t and t != bad])
        hits += [(m.start(), bad, good) for m in _pattern(bad).finditer(masked)]
    return hits


def _avoid_block_lines(text: str) -> set[int]:
    """1-based line numbers of the directive blocks with ``:class: terms-to-avoid``."""
    lines = text.splitlines()
    allowed: set[int] = set()
    i = 0
    while i < len(lines):
        m = re.match(r"^([`:]{3,})\{", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and lines[j].strip() != m.group(1):
                j += 1
            if any(re.match(rf"^:class:.*\b{AVOID_CLASS}\b", ln) for ln in lines[i:j + 1]):
                allowed.update(range(i + 1, j + 2))
            i = j + 1
            continue
        i += 1
    return allowed


def _english_cells(text: str) -> set[int]:
    """1-based line numbers of the cells of table columns headed "English" (the glossary's)."""
    lines = text.splitlines()
    out: set[int] = set()
    column, cell = None, -1
    for n, ln in enumerate(lines, start=1):
        if re.match(r"^[`:]{3,}\{list-table\}", ln):
            column, cell = None, -1
        elif ln.startswith("* - ") or (ln.startswith("  - ") and cell >= 0):
            cell = 0 if ln.startswith("* - ") else cell + 1
            if column is None and ln[4:].strip() == "English":
                column = cell
            elif column is not None and cell == column:
                out.add(n)
    return out


def svg_text(path: Path) -> str:
    """The text a reader sees or hears in an SVG figure (``<text>``/``<tspan>``, ``<title>``,
    ``<desc>`` contents, one per line)."""
    import html

    svg = path.read_text(encoding="utf-8")
    parts = re.findall(r"<(?:text|tspan|title|desc)\b[^>]*>([^<]*)(?=<)", svg)
    return "\n".join(html.unescape(p) for p in parts if p.strip())


def alt_texts(text: str) -> list[tuple[int, str]]:
    """(line, text) of every alt text of a page: ``:alt:`` of a figure or image directive,
    ``alt:`` in a code cell's ``mystnb`` metadata (a plot's), Markdown ``![alt](…)`` and HTML
    ``<img alt="…">``. A screen reader reads them as prose."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"^\s*:?alt:\s*(.+?)\s*$", line)
        if m:
            out.append((n, m.group(1).strip("'\"")))
        out += [(n, a) for a in re.findall(r"!\[([^\]]+)\]\(", line)]
        out += [(n, a) for a in re.findall(r"<img\b[^>]*\balt=\"([^\"]*)\"", line)]
    return out


def chapters_in_order(lang: str) -> list[Path]:
    return [BOOK / lang / f"{name}.md" for name in toc_files() if is_chapter(name)
            and (BOOK / lang / f"{name}.md").exists()]


def _term_found(key: str, prose: str, lang: str) -> bool:
    if lang == "en":  # plurals and hyphenated forms count: "attention heads", "pre-LN"
        return re.search(rf"(?<![A-Za-z]){re.escape(key)}", prose, re.I) is not None
    return key in prose


def first_chapter(key: str, lang: str, prose_by_chapter: dict[str, str]) -> str | None:
    for name, prose in prose_by_chapter.items():
        if _term_found(key, prose, lang):
            return name
    return None


def chapter_labels(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return set(LABEL_RE.findall(text)) | set(directive_labels(text))


def section_labels(text: str) -> list[tuple[int, str]]:
    """(1-based line, label) of every labelled heading of a page, in order (a label line
    ``(sec-x)=`` directly above a ``#`` heading, blank lines allowed between them)."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = LABEL_RE.match(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines) and HEADING_RE.match(lines[j]):
            out.append((i + 1, m.group(1)))
    return out


def first_section(key: str, lang: str, texts: dict[str, str]) -> tuple[str, str] | None:
    """(chapter, section label) of the first occurrence of a term (or of one of its
    ``FIRST_ALIASES``) in the prose of ``texts`` (chapter name -> source, in table-of-contents
    order), or None when no chapter uses it."""
    forms = (key, *FIRST_ALIASES[lang].get(key, ()))
    for name, text in texts.items():
        prose, where = joined_prose(text)
        found = []
        for form in forms:
            if lang == "en":
                m = re.search(rf"(?<![A-Za-z]){re.escape(form)}", prose, re.I)
                found += [m.start()] if m else []
            elif form in prose:
                found.append(prose.index(form))
        if not found:
            continue
        pos = min(found)
        line = where[pos]
        labels = [label for n, label in section_labels(text) if n <= line]
        return name, (labels[-1] if labels else "")
    return None


# ---------------------------------------------------------------------------- the tests
ZH_PAGES = sorted((BOOK / "zh").glob("*.md"))


@pytest.mark.parametrize("path", ZH_PAGES, ids=lambda p: f"zh/{p.name}")
def test_no_avoided_variant_in_zh_prose(path):
    hits = avoided_uses(path.read_text(encoding="utf-8"))
    assert not hits, "\n".join(f"zh/{path.name}:{n}: '{bad}' -> use '{good}' (glossary)"
                               for n, bad, good in hits)


@pytest.mark.parametrize("path", ZH_PAGES, ids=lambda p: f"zh/{p.name}")
def test_no_avoided_variant_in_zh_alt_text(path):
    hits = sorted({(n, bad, good) for n, alt in alt_texts(path.read_text(encoding="utf-8"))
                   for _, bad, good in find_avoided(alt, AVOIDED, PREFERRED_KEYS)})
    assert not hits, "\n".join(f"zh/{path.name}:{n}: alt text says '{bad}' -> use '{good}'"
                               for n, bad, good in hits)


@pytest.mark.parametrize("path", sorted((BOOK / "zh" / "img").glob("*.svg")),
                         ids=lambda p: f"zh/img/{p.name}")
def test_no_avoided_variant_in_zh_figures(path):
    hits = sorted({(bad, good) for _, bad, good in
                   find_avoided(svg_text(path), AVOIDED, PREFERRED_KEYS)})
    assert not hits, "\n".join(f"zh/img/{path.name}: '{bad}' -> use '{good}'"
                               for bad, good in hits)


def test_glossary_has_an_avoid_table_of_synonyms():
    names = {name for _, _, name in AVOIDED}
    assert VARIANTS_TABLE in names, f"zh/glossary.md: no terms-to-avoid table {VARIANTS_TABLE}"


def test_preferred_terms_are_glossary_terms():
    keys = set(PREFERRED_KEYS)
    missing = sorted({good for _, good, name in AVOIDED if name == VARIANTS_TABLE} - keys)
    assert not missing, f"preferred terms of {VARIANTS_TABLE} missing from the glossary: {missing}"


def test_no_term_is_both_preferred_and_avoided():
    both = sorted({bad for bad, _, _ in AVOIDED} & set(PREFERRED_KEYS))
    assert not both, f"terms both in the glossary and in a terms-to-avoid table: {both}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_glossary_term_is_used(lang):
    prose = "\n".join(joined_prose(p.read_text(encoding="utf-8"))[0]
                      for p in chapters_in_order(lang))
    unused = [r["key"] for r in glossary_terms(lang) if not _term_found(r["key"], prose, lang)]
    assert not unused, f"{lang}/glossary.md lists terms no chapter uses: {unused}"


def wrong_first_appears(lang: str) -> list[str]:
    """The glossary rows whose "first appears" pointer is not the section (the nearest labelled
    heading above) where the term first occurs, chapters in table-of-contents order."""
    texts = {p.stem: p.read_text(encoding="utf-8") for p in chapters_in_order(lang)}
    wrong = []
    for row in glossary_terms(lang):
        if row["key"] in NO_FIRST_CHECK[lang]:
            continue
        found = first_section(row["key"], lang, texts)
        if found is None:
            continue  # test_every_glossary_term_is_used reports it
        chapter, label = found
        if row["label"] != label:
            wrong.append(f"{row['key']}: points to {row['label']!r}, first occurs in "
                         f"{chapter}.md under {label!r}")
    return wrong


def computed_first_appears(lang: str) -> dict[str, str]:
    """Glossary term (its first cell) -> the label of the section where it first appears."""
    texts = {p.stem: p.read_text(encoding="utf-8") for p in chapters_in_order(lang)}
    out = {}
    for row in glossary_terms(lang):
        found = None if row["key"] in NO_FIRST_CHECK[lang] else first_section(row["key"], lang,
                                                                               texts)
        if found is not None:
            out[row["term"]] = found[1]
    return out


def write_first_appears(lang: str) -> list[str]:
    """Rewrite the "first appears" cells of ``book/<lang>/glossary.md`` from the sources;
    return the terms changed (``python tests/chapters/test_terminology.py --write``)."""
    path = BOOK / lang / "glossary.md"
    lines = path.read_text(encoding="utf-8").split("\n")
    computed, changed = computed_first_appears(lang), []
    for i, line in enumerate(lines):
        term = line[4:].strip() if line.startswith("* - ") else None
        if term in computed and i + 3 < len(lines) and lines[i + 3].startswith("  - {ref}"):
            new = f"  - {{ref}}`{computed[term]}`"
            if lines[i + 3] != new:
                lines[i + 3] = new
                changed.append(term)
    path.write_text("\n".join(lines), encoding="utf-8")
    return changed


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_first_appears_pointers(lang):
    wrong = wrong_first_appears(lang)
    assert not wrong, f"{lang}/glossary.md, wrong 'first appears' pointers:\n" + "\n".join(wrong)


# ---------------------------------------------------------------------------- the checks can fail
def test_avoided_use_is_found_and_exemptions_hold():
    avoided = [("批次", "批量", VARIANTS_TABLE), ("评分", "分数", VARIANTS_TABLE),
               ("dropout", "暂退法", VARIANTS_TABLE), ("分词", "词元化", VARIANTS_TABLE)]
    preferred = ["评分函数", "批量", "暂退法"]
    text = ("一个批次。\n"                       # 1: avoided
            "评分函数给出分数。\n"                # 2: part of a preferred term: fine
            "暂退法（dropout）。\n"               # 3: an English gloss: fine
            "对输出做 dropout。\n"                # 4: bare English term in Chinese prose
            "`nn.Dropout(dropout)` 与 $p_{dropout}$。\n"  # 5: code and math: fine
            "用来区分词尾。\n"                    # 6: 区分 + 词尾, not 分词: fine
            "```{code-cell} ipython3\nx = 1  # 批次\n```\n")  # code cell: fine
    assert avoided_uses(text, avoided, preferred) == [(1, "批次", "批量"),
                                                      (4, "dropout", "暂退法")]


def test_alt_text_and_figure_text_are_read():
    page = ('```{figure} img/a.svg\n:alt: 用强制教学训练\n```\n'
            '```{code-cell} ipython3\n---\nmystnb:\n  image:\n    alt: "各个评分"\n---\nx\n```\n'
            '![一个批次](img/b.png) <img src="c.png" alt="KV 缓存">\n')
    alts = alt_texts(page)
    assert alts == [(2, "用强制教学训练"), (8, "各个评分"), (12, "一个批次"), (12, "KV 缓存")]
    avoided = [("强制教学", "教师强制", VARIANTS_TABLE), ("评分", "分数", VARIANTS_TABLE),
               ("批次", "批量", VARIANTS_TABLE), ("KV 缓存", "键值缓存", VARIANTS_TABLE)]
    found = [bad for _, alt in alts for _, bad, _ in find_avoided(alt, avoided, [])]
    assert found == ["强制教学", "评分", "批次", "KV 缓存"]


def test_svg_text_reads_text_title_and_desc(tmp_path):
    svg = tmp_path / "f.svg"
    svg.write_text('<svg><title>遮蔽</title><desc>层归一化</desc><text x="1">批次'
                   '<tspan>得分</tspan></text></svg>', encoding="utf-8")
    assert svg_text(svg).split("\n") == ["遮蔽", "层归一化", "批次", "得分"]


def test_glossary_parser_and_first_chapter():
    text = ("```{list-table} t\n:header-rows: 1\n:name: tab-glossary-terms\n\n"
            "* - 中文\n  - English\n  - 释义\n  - 首次出现\n"
            "* - 暂退法（dropout）\n  - dropout\n  - 随机置零。\n  - {ref}`sec-b`\n```\n")
    rows = glossary_terms("zh", text)
    assert rows == [{"term": "暂退法（dropout）", "key": "暂退法", "other": "dropout",
                     "label": "sec-b"}]
    prose = {"a": "没有这个词。", "b": "这里用到暂退法。"}
    assert first_chapter("暂退法", "zh", prose) == "b"
    assert first_chapter("dropout", "en", {"a": "no", "b": "Dropout layers"}) == "b"


# ---------------------------------------------------------------------------- English spelling
# The English edition spells -ise/-isation/-iser (British "-ise", the majority of the text when
# the rule was set): normalisation, initialise, optimiser, tokeniser. Code, inline code and
# library names are not prose and keep their own spelling (``nn.LayerNorm``, ``tokenizers``).
IZE_RE = re.compile(r"\b([A-Za-z]+?)(?:iz|yz)(e|es|ed|ing|ation|ations|er|ers|able)\b")
# words whose -ize is the only spelling
IZE_OK = {"size", "sizes", "sized", "sizing", "resize", "resized", "resizing", "prize", "prizes",
          "seize", "seized", "capsize", "downsize", "oversized", "figsize", "fontsize"}


def ize_spellings(text: str) -> list[tuple[int, str]]:
    """(line, word) for each -ize/-yze spelling in the prose of an English page."""
    hits = []
    for n, line in enumerate(plain_prose(text).splitlines(), start=1):
        for m in IZE_RE.finditer(line):
            word = m.group(0)
            if word.lower() not in IZE_OK:
                hits.append((n, word))
    return hits


@pytest.mark.parametrize("path", sorted((BOOK / "en").glob("*.md")), ids=lambda p: f"en/{p.name}")
def test_english_spells_ise(path):
    hits = ize_spellings(path.read_text(encoding="utf-8"))
    assert not hits, "\n".join(f"en/{path.name}:{n}: '{w}' -> the book spells -ise"
                               for n, w in hits)


def test_ise_check_can_fail():
    text = "We normalize the sizes.\n`normalize()` is code; initialisation is fine.\n"
    assert ize_spellings(text) == [(1, "normalize")]


if __name__ == "__main__":  # python tests/chapters/test_terminology.py --write
    import sys

    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/chapters/test_terminology.py --write  (recompute the "
                 "glossaries' 'first appears' column from the chapters)")
    for edition in ("zh", "en"):
        print(edition, write_first_appears(edition))
