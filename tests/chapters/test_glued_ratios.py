"""Glued ratios read true for any value the code may glue.

A sentence that quotes a measured or computed ratio ("doubling n multiplied the time by
{glue}", "是 GRU 层的 {glue} 倍") usually relies on bounds: more than 2, less than 1. The chapters
glue such ratios with ``book.glue_ratio(name, value, low, high)``, which stops the build when the
value leaves the bounds (tests/library/test_glue_ratio.py). Here, from the chapter sources:

* every glue quoted in prose next to a ratio word (倍, 之比, 因子, times, factor, ratio, …) is
  glued by ``glue_ratio``, not by a bare ``glue``;
* each literal bound other than 0 and 1 is written, as a number, in every sentence that quotes
  the ratio, in both editions (bounds 0 and 1 are what "less", "more", "faster" say in words).
"""
from __future__ import annotations

import ast
import re

import pytest

from chapter_source import GLUE_USE_RE, LANGS, chapter_files, prose, read_notebook

# a ratio word after the glue ("{glue} 倍", "{glue} times as long") or before it ("a factor of
# {glue}", "multiplied the time by {glue}", "权重之比为 {glue}")
AFTER_WORDS = re.compile(r"倍|数量级|分之|\btimes\b|\bfold\b|orders? of magnitude", re.I)
BEFORE_WORDS = re.compile(r"之比|比值|因子|倍数|\bfactor\b|\bratio\b|multiplied", re.I)
BEFORE, AFTER = 30, 14  # characters of prose around a glue in which a ratio word counts
STOPS = "，,；;：:。.!?！？（）()"  # a clause ends: the words beyond belong to another number


def ratio_calls(sources: list[str]) -> dict[str, tuple]:
    """{name or f-string pattern: (low, high)} for each ``glue_ratio`` call in the code cells.

    A bound that is not a number literal is returned as ``...`` (it cannot be checked here).
    """
    calls = {}
    for src in sources:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if fname != "glue_ratio" or not node.args:
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                name = first.value
            elif isinstance(first, ast.JoinedStr):
                name = "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+"
                               for v in first.values)
                name = f"re:{name}"
            else:
                continue
            bounds = {"low": None, "high": None}
            for key, arg in zip(("low", "high"), node.args[2:4]):
                bounds[key] = arg
            for kw in node.keywords:
                if kw.arg in bounds:
                    bounds[kw.arg] = kw.value

            def literal(arg):
                if arg is None:
                    return None
                try:
                    value = ast.literal_eval(arg)
                except ValueError:
                    return ...
                return float(value) if isinstance(value, (int, float)) else ...

            calls[name] = (literal(bounds["low"]), literal(bounds["high"]))
    return calls


def _bounds_of(name: str, calls: dict) -> tuple | None:
    if name in calls:
        return calls[name]
    for key, bounds in calls.items():
        if key.startswith("re:") and re.fullmatch(key[3:], name):
            return bounds
    return None


def _sentence(text: str, start: int, end: int) -> str:
    left = max(text.rfind(c, 0, start) for c in "。！？\n") + 1
    left = max(left, max((m.end() for m in re.finditer(r"[.!?]\s", text[:start])), default=0))
    rights = [i for i in (text.find(c, end) for c in "。！？\n") if i >= 0]
    m = re.search(r"[.!?](\s|$)", text[end:])
    if m:
        rights.append(end + m.start())
    return text[left:min(rights) if rights else len(text)]


def _number_written(bound: float, sentence: str) -> bool:
    written = f"{bound:g}"
    return re.search(rf"(?<![\d.]){re.escape(written)}(?![\d])", sentence) is not None


def ratio_problems(text: str, sources: list[str]) -> list[str]:
    """What is wrong with the glued ratios of one chapter (its text and code cell sources)."""
    calls = ratio_calls(sources)
    body = re.sub(r"(\{[a-z:]+\}`[^`]*`)|``[^`]+``|`[^`\n]+`",  # no inline code; roles stay
                  lambda m: m.group(1) or " ", prose(text))
    body = re.sub(r"\$\$.*?\$\$", " ", body, flags=re.S)  # no math
    body = re.sub(r"(?<!\\)\$[^$\n]+?\$", " ", body)
    body = re.sub(r"\s*\n\s*", lambda m: "\n" if m.group().count("\n") > 1 else " ", body)
    problems = []
    uses = list(GLUE_USE_RE.finditer(body))
    for k, m in enumerate(uses):
        name = m.group(1).split(":")[0].strip()
        sentence = _sentence(body, m.start(), m.end())
        # the words between this glue and its neighbours in the same sentence
        lo = max(m.start() - BEFORE, uses[k - 1].end() if k else 0, body.find(sentence))
        hi = min(m.end() + AFTER, uses[k + 1].start() if k + 1 < len(uses) else len(body),
                 body.find(sentence) + len(sentence))
        before, after = body[lo:m.start()], body[m.end():hi]
        for c in STOPS:
            before = before.rsplit(c, 1)[-1] if c not in "(（" else before
            after = after.split(c, 1)[0] if c not in ")）" else after
        is_ratio = AFTER_WORDS.search(after) or BEFORE_WORDS.search(before)
        window = f"{before}{{{name}}}{after}"
        bounds = _bounds_of(name, calls)
        if bounds is None:
            if is_ratio:
                problems.append(f"{name}: quoted as a ratio ('{window.strip()}') but glued "
                                "without book.glue_ratio")
            continue
        for bound in bounds:
            if bound in (None, ..., 0.0, 1.0) or bound != bound or abs(bound) == float("inf"):
                continue
            if not _number_written(bound, sentence):
                problems.append(f"{name}: glue_ratio bound {bound:g} is not written in the "
                                f"sentence that quotes it: '{sentence.strip()}'")
    return problems


def _chapter_id(p):
    return f"{p.parent.name}/{p.name}"


@pytest.mark.parametrize("path", [p for lang in LANGS for p in chapter_files(lang)],
                         ids=_chapter_id)
def test_glued_ratios_have_stated_bounds(path):
    text = path.read_text(encoding="utf-8")
    sources = [c.source for c in read_notebook(path).cells if c.cell_type == "code"]
    problems = ratio_problems(text, sources)
    assert not problems, f"{_chapter_id(path)}:\n" + "\n".join(problems)


# ---------------------------------------------------------------------------- the check can fail
CODE = ('book.glue_ratio("ch0_growth", t2 / t1, low=2, high=8)\n'
        'glue("ch0_bare", r, display=False)\n'
        'book.glue_ratio(f"ch0_x_{k}", r, 1)\n')


def test_ratio_glued_without_the_helper_is_found():
    text = "It took {glue:text}`ch0_bare:.1f` times as long.\n"
    assert any("without book.glue_ratio" in p for p in ratio_problems(text, [CODE]))


def test_bounds_must_be_written_in_the_sentence():
    good = ("Doubling n multiplied the time by {glue:text}`ch0_growth:.1f`, between 2 and 8 as "
            "the cell asserts. Next sentence.\n其中 {glue:text}`ch0_x_3:.2f` 倍更快。\n")
    assert ratio_problems(good, [CODE]) == []
    bad = "Doubling n multiplied the time by {glue:text}`ch0_growth:.1f`. It is between 2 and 8.\n"
    problems = ratio_problems(bad, [CODE])
    assert len(problems) == 2 and "bound 2" in problems[0] and "bound 8" in problems[1]


def test_calls_are_parsed():
    assert ratio_calls([CODE]) == {"ch0_growth": (2.0, 8.0), r"re:ch0_x_.+": (1.0, None)}
