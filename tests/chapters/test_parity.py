"""zh/en parity: both editions have the same files, code, labels, structure, glue, citations.

Prose is written natively in each language; everything a reader can cross-reference or that
the build executes must be identical (see CONTRIBUTING.md, "What must be identical").
"""
from __future__ import annotations

import textwrap

import pytest

from chapter_source import (BOOK, EDITION_CITES, LANGS, all_relpaths, chapter_files, cite_keys,
                            compare_pair, pair_names)


def test_same_files_in_both_editions():
    zh, en = all_relpaths("zh"), all_relpaths("en")
    only_zh, only_en = sorted(zh - en), sorted(en - zh)
    assert not only_zh and not only_en, (
        f"files only in book/zh: {only_zh}\nfiles only in book/en: {only_en}"
    )


@pytest.mark.parametrize("name", pair_names())
def test_pair_parity(name):
    paths = {lang: BOOK / lang / name for lang in LANGS}
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        pytest.fail(f"{name}: missing counterpart(s): {missing}")
    problems = compare_pair(paths["zh"], paths["en"])
    assert not problems, "\n\n".join(problems)


HEADER = textwrap.dedent(
    """\
    ---
    jupytext:
      text_representation:
        extension: .md
        format_name: myst
        format_version: 0.13
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---
    """
)


def _write(tmp_path, lang, body):
    d = tmp_path / lang
    d.mkdir(exist_ok=True)
    p = d / "ch.md"
    p.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    return p


GOOD_ZH = """\
(sec-demo)=
# 演示

```{code-cell} ipython3
# 中文注释
x = "a # not a comment"  # 行尾注释
glue("ch0_x", 1)
```

结果是 {glue:text}`ch0_x:.2f` {cite}`vaswani2017attention`。
"""
GOOD_EN = """\
(sec-demo)=
# Demo

```{code-cell} ipython3
# an English comment
x = "a # not a comment"

glue("ch0_x", 1)
```

The result is {glue:text}`ch0_x:.2f` {cite}`vaswani2017attention`.
"""


def test_checker_accepts_matching_pair(tmp_path):
    assert compare_pair(_write(tmp_path, "zh", GOOD_ZH), _write(tmp_path, "en", GOOD_EN)) == []


@pytest.mark.parametrize(
    "mutation, expected",
    [
        (('"a # not a comment"', '"a # changed"'), "code cell #1 differs"),
        (("(sec-demo)=", "(sec-other)="), "MyST labels"),
        (("# Demo", "## Demo"), "heading levels"),
        (("{glue:text}`ch0_x:.2f`", "{glue:text}`ch0_y:.2f`"), "glue names used"),
        (("vaswani2017attention", "bahdanau2014neural"), "{cite} keys"),
    ],
)
def test_checker_detects_mismatch(tmp_path, mutation, expected):
    """Meta-test: the checker really fails (with a diff) on a mismatched synthetic pair."""
    old, new = mutation
    problems = compare_pair(
        _write(tmp_path, "zh", GOOD_ZH), _write(tmp_path, "en", GOOD_EN.replace(old, new))
    )
    assert problems, "mismatch not detected"
    text = "\n".join(problems)
    assert expected in text and "ch.md" in text and ("---" in text or "vs" in text), text


def test_edition_specific_citations_are_allowed_and_one_way(tmp_path):
    """zh cites 《动手学深度学习》 where en cites Dive into Deep Learning; nothing else may
    differ."""
    zh = GOOD_ZH.replace("vaswani2017attention", "zhang2023dive_zh")
    en = GOOD_EN.replace("vaswani2017attention", "zhang2023dive")
    assert compare_pair(_write(tmp_path, "zh", zh), _write(tmp_path, "en", en)) == []
    # the pair only holds in that direction: en citing the zh key is a mismatch
    en_wrong = GOOD_EN.replace("vaswani2017attention", "zhang2023dive_zh")
    assert compare_pair(_write(tmp_path, "zh", zh), _write(tmp_path, "en", en_wrong))


@pytest.mark.parametrize("lang", LANGS)
def test_each_edition_cites_its_own_d2l(lang):
    """The zh edition never cites the English d2l, the en edition never the Chinese one."""
    wrong = set(EDITION_CITES.values()) if lang == "zh" else set(EDITION_CITES)
    hits = sorted(p.name for p in chapter_files(lang)
                  if cite_keys(p.read_text(encoding="utf-8")) & wrong)
    assert not hits, f"{lang}: pages citing the other edition's d2l ({sorted(wrong)}): {hits}"


def test_claim_sentences_may_differ_but_not_their_code(tmp_path):
    """book.claim's statement and book.choose's phrases are prose (one per language); the claim's
    name, its condition and its values are code and must match."""
    zh = GOOD_ZH.replace('glue("ch0_x", 1)', 'book.claim("ch0_c", x > 0, "x 是正数", x=x)\n'
                         'book.choose("ch0_p", x > 0, "为正", "不为正")\nglue("ch0_x", 1)')
    en = GOOD_EN.replace('glue("ch0_x", 1)', 'book.claim("ch0_c", x > 0, "x is positive", x=x)\n'
                         'book.choose("ch0_p", x > 0, "is positive", "is not")\nglue("ch0_x", 1)')
    assert compare_pair(_write(tmp_path, "zh", zh), _write(tmp_path, "en", en)) == []
    for old, new in [("x > 0, \"x is", "x >= 0, \"x is"), ('"ch0_c"', '"ch0_d"'),
                     ("x=x)", "x=2)"), ('"ch0_p", x > 0', '"ch0_p", x < 0')]:
        assert compare_pair(_write(tmp_path, "zh", zh),
                            _write(tmp_path, "en", en.replace(old, new))), old
