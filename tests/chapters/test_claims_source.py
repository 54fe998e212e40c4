"""The claims in the chapter sources (``book.claim``, ``book.choose``, bounded ``book.glue_ratio``).

Both editions of a chapter make the same claims under the same names (only the statements and
phrases differ by language); a name is used once per chapter (its record on the execution report
is keyed by it); names carry the chapter's prefix; a chosen phrase is pasted into the text of
each edition with ``{glue:md}``.
"""
from __future__ import annotations

import ast
from collections import Counter

import pytest
from tools.bookmeta import chapter_numbers
from chapter_source import BOOK, LANGS, glue_uses, pair_names, read_notebook

CLAIM_FUNCS = {"claim", "choose", "glue_ratio"}


def claim_calls(sources: list[str]) -> list[tuple[str, str]]:
    """(function, name) for each claim the code cells make, in order. A ``glue_ratio`` is a
    claim only with a bound (``low``/``high``, by position or keyword); an f-string name is
    kept as written (``f"ch7_x_{k}"``)."""
    calls = []
    for src in sources:
        try:
            tree = ast.parse("\n".join(ln for ln in src.splitlines()
                                       if not ln.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in CLAIM_FUNCS and node.args):
                continue
            if node.func.attr == "glue_ratio" and len(node.args) < 3 and not any(
                    k.arg in ("low", "high") for k in node.keywords):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                calls.append((node.func.attr, first.value))
            elif isinstance(first, ast.JoinedStr):
                calls.append((node.func.attr, "f:" + ast.unparse(first)[2:-1]))
    return calls


def chapter_claims(lang: str, name: str) -> list[tuple[str, str]]:
    nb = read_notebook(BOOK / lang / name)
    return claim_calls([c.source for c in nb.cells if c.cell_type == "code"])


PAGES = [n for n in pair_names() if all((BOOK / lang / n).exists() for lang in LANGS)]
NUMBERS = chapter_numbers()


@pytest.mark.parametrize("name", PAGES)
def test_both_editions_make_the_same_claims(name):
    zh, en = chapter_claims("zh", name), chapter_claims("en", name)
    assert zh == en, (f"{name}: the claims differ between the editions (zh only: "
                      f"{sorted(set(zh) - set(en))}, en only: {sorted(set(en) - set(zh))})"
                      if set(zh) != set(en) else f"{name}: the claims are in another order")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", PAGES)
def test_claim_names_unique_and_prefixed(lang, name):
    calls = chapter_claims(lang, name)
    twice = sorted(n for n, k in Counter(n for _, n in calls).items() if k > 1)
    assert not twice, f"{lang}/{name}: claim names used more than once: {twice}"
    stem = name[: -len(".md")]
    if stem in NUMBERS:
        prefix = f"ch{NUMBERS[stem]}_"
        wrong = [n for _, n in calls if not n.removeprefix("f:").startswith(prefix)]
        assert not wrong, f"{lang}/{name}: claim names without the prefix {prefix!r}: {wrong}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", PAGES)
def test_chosen_phrases_are_pasted(lang, name):
    text = (BOOK / lang / name).read_text(encoding="utf-8")
    chosen = {n for f, n in chapter_claims(lang, name)
              if f == "choose" and not n.startswith("f:")}
    missing = sorted(chosen - glue_uses(text))
    assert not missing, f"{lang}/{name}: book.choose phrases never pasted ({{glue:md}}): {missing}"


def test_the_parser_finds_every_kind_of_claim():
    src = ('book.claim("ch0_a", x < y, "s", x=x)\n'
           'book.choose(\'ch0_b\', ok, "yes", "no")\n'
           'book.glue_ratio("ch0_c", r, 1, 2)\n'
           'book.glue_ratio("ch0_d", r, high=2)\n'
           'book.glue_ratio("ch0_free", r)\n'          # unbounded: a number, not a claim
           'for k in ks:\n    book.claim(f"ch0_e_{k}", True, "s")\n'
           '%timeit x\n')
    assert claim_calls([src]) == [("claim", "ch0_a"), ("choose", "ch0_b"),
                                  ("glue_ratio", "ch0_c"), ("glue_ratio", "ch0_d"),
                                  ("claim", "f:ch0_e_{k}")]


def _english_statements(src: str) -> list[str]:
    """The statements of ``claim`` calls written as Latin-only text: a string constant (or an
    f-string) without a Chinese character, where the zh edition needs ``book.label(en, zh)``
    or a phrase in Chinese."""
    try:
        tree = ast.parse("\n".join(ln for ln in src.splitlines()
                                   if not ln.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "claim" and len(node.args) >= 3):
            continue
        statement = node.args[2]
        if isinstance(statement, (ast.Constant, ast.JoinedStr)):
            text = ast.unparse(statement)
            if not any("\u4e00" <= ch <= "\u9fff" for ch in text):
                found.append(text)
    return found


@pytest.mark.parametrize("name", PAGES)
def test_zh_claims_are_stated_in_chinese(name):
    """The execution report of the zh edition lists each claim's statement: Chinese there."""
    nb = read_notebook(BOOK / "zh" / name)
    english = [s for c in nb.cells if c.cell_type == "code" for s in _english_statements(c.source)]
    assert not english, f"zh/{name}: claims stated in English only: {english}"


def test_the_statement_check_can_fail():
    assert _english_statements('book.claim("ch0_a", ok, "the loss fell")') == ["'the loss fell'"]
    assert not _english_statements('book.claim("ch0_a", ok, book.label("fell", "下降了"))')
    assert not _english_statements('book.claim("ch0_a", ok, "损失下降了")')
