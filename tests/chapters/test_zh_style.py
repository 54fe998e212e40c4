"""Chinese that reads as written in Chinese: no synthetic italics, code comments in Chinese.

* Italic emphasis (``*…*`` or ``_…_``) around Chinese text renders as slanted CJK glyphs, which
  Chinese typography does not use; the zh edition uses bold or rephrases.
* Comments in the zh edition's code cells are written in Chinese (the code itself is identical in
  both editions). ``# @save`` cells are the package's code and are left to the tool that keeps
  them in step with it.
"""
from __future__ import annotations

import io
import re
import tokenize

import pytest
from tools import myst

from chapter_source import BOOK, plain_prose, read_notebook

CJK = myst.HAN
# emphasis spans, paired left to right as Markdown pairs them (bold removed first)
ITALIC_RES = [re.compile(r"(?<![\\*])\*(?![\s*])([^*\n]+?)(?<![\s\\])\*"),
              re.compile(r"(?<![\\_A-Za-z0-9])_(?![\s_])([^_\n]+?)(?<![\s\\])_(?![_A-Za-z0-9])")]
ZH_PAGES = sorted((BOOK / "zh").glob("*.md"))


def italic_cjk(text: str) -> list[tuple[int, str]]:
    """(line, span) for each italic span that contains a Chinese character."""
    hits = []
    for n, line in enumerate(plain_prose(text).splitlines(), start=1):
        line = line.replace("**", "\0\0")  # bold is fine
        for pat in ITALIC_RES:
            hits += [(n, m.group(0).replace("\0", "*")) for m in pat.finditer(line)
                     if re.search(f"[{CJK}]", m.group(1))]
    return hits


@pytest.mark.parametrize("path", ZH_PAGES, ids=lambda p: f"zh/{p.name}")
def test_no_italic_chinese(path):
    hits = italic_cjk(path.read_text(encoding="utf-8"))
    assert not hits, "\n".join(f"zh/{path.name}:{n}: {span}  (use bold or rephrase)"
                               for n, span in hits)


def test_italic_check_can_fail():
    text = "*强调*，**粗体**，*it* 与 $a*b*c$，`*x*`，它*怎么*传递，a_b_c。\n"
    assert italic_cjk(text) == [(1, "*强调*"), (1, "*怎么*")]


def english_comments(source: str) -> list[tuple[int, str]]:
    """(line, comment) for comments written in English in a code cell's source.

    A comment is English when, after removing quoted text, backticks and parenthesised shapes, it
    has at least two words of three or more letters that are not names used in the code, and no
    Chinese character. Shape notes such as ``# (B, T, d)`` and names such as ``# W_q`` pass.
    """
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(source + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    names = {t.string for t in toks if t.type == tokenize.NAME}
    names |= {part for name in names for part in name.split("_")}
    hits = []
    for t in toks:
        if t.type != tokenize.COMMENT:
            continue
        text = t.string.lstrip("#").strip()
        if re.search(f"[{CJK}]", text):
            continue
        stripped = re.sub(r"“[^”]*”|\"[^\"]*\"|'[^']*'|`[^`]*`", " ", text)
        while re.search(r"\([^()]*\)", stripped):
            stripped = re.sub(r"\([^()]*\)", " ", stripped)
        words = [w for w in re.findall(r"[A-Za-z]{3,}", stripped) if w not in names]
        if len(set(words)) >= 2:
            hits.append((t.start[0], t.string))
    return hits


@pytest.mark.parametrize("path", ZH_PAGES, ids=lambda p: f"zh/{p.name}")
def test_zh_code_comments_in_chinese(path):
    hits = []
    for k, cell in enumerate(c for c in read_notebook(path).cells if c.cell_type == "code"):
        if cell.source.lstrip().startswith("# @save"):
            continue
        hits += [f"zh/{path.name}: code cell #{k + 1}, line {n}: {c}"
                 for n, c in english_comments(cell.source)]
    assert not hits, "comments in English in the zh edition:\n" + "\n".join(hits)


def test_comment_check_can_fail():
    src = ("x = rows_of(W)  # (B, T, d) -> (B*h, T, d_h)\n"
           "y = 2  # the same input at two positions\n"
           "z = 3  # 每个头一行\n"
           "w = 4  # “……and it was tired”\n")
    assert english_comments(src) == [(2, "# the same input at two positions")]


def test_zh_prose_has_no_hard_line_breaks():
    """One paragraph per line in the zh chapters: a line break inside a Chinese sentence shows
    as a stray space on the page and as a broken line in the exported notebook.
    ``python -m tools.checks.zh_prose --write`` joins them."""
    from tools.checks import zh_prose

    found = {p.name: zh_prose.hard_breaks(p.read_text(encoding="utf-8"))
             for p in sorted((BOOK / "zh").glob("*.md"))}
    assert not {k: v for k, v in found.items() if v}, found


def test_hard_break_check_can_fail():
    from tools.checks import zh_prose

    text = "注意力把每个位置\n与其他位置联系起来。\n\n```{code-cell} ipython3\n# 代码\nx = 1\n```\n"
    assert zh_prose.hard_breaks(text) == [1]
    assert zh_prose.join_breaks(text).startswith("注意力把每个位置与其他位置联系起来。\n")


# Large counts: one convention in the zh edition, 万 (10^4) and 亿 (10^8): "6308 万", "2.14 亿"
# (a glued count is formatted by book.magnitude). Not "63.1 M", "37 k", "100K" or "63.1 百万".
# Units of size and work (MB, MiB, GiB, MFLOPs) are not counts and stay as they are, and so does a
# model's name by its size ("Llama 2 的 70B 模型").
_LATIN_MAGNITUDE = r"(?:M|k|K|B(?!\s*模型)|百万)(?![A-Za-z])"
_TYPED_MAGNITUDE = re.compile(r"(?<![A-Za-z_])\d[\d.,]*\s*" + _LATIN_MAGNITUDE)
_GLUED_MAGNITUDE = re.compile(r"\{glue:text\}`[^`]*`\s*" + _LATIN_MAGNITUDE)


def latin_magnitudes(text: str) -> list[tuple[int, str]]:
    """(line, text) for each count written with a Latin magnitude (or 百万) in zh prose: typed
    ("65 M", "37 k") or after a glued number ("{glue:text}`x:.1f` M")."""
    hits = []
    for n, (raw, prose) in enumerate(zip(text.split("\n"), plain_prose(text).split("\n")),
                                     start=1):
        if not prose.strip():  # code, math, labels: not prose
            continue
        hits += [(n, m.group(0)) for m in _TYPED_MAGNITUDE.finditer(prose)]
        hits += [(n, m.group(0)) for m in _GLUED_MAGNITUDE.finditer(raw)]
    return hits


@pytest.mark.parametrize("path", ZH_PAGES, ids=lambda p: f"zh/{p.name}")
def test_counts_in_wan_and_yi(path):
    hits = latin_magnitudes(path.read_text(encoding="utf-8"))
    assert not hits, "\n".join(f"zh/{path.name}:{n}: {span}  (write 万/亿; a glued count: "
                               "book.magnitude)" for n, span in hits)


def test_magnitude_check_can_fail():
    text = ("有 {glue:text}`p:.1f` M 个参数，论文为 65 M，词表 37 k，训练 100K 步，"
            "共 {glue:text}`q:.1f` 百万个。\n"
            "缓存 {glue:text}`c:.2f` MiB，每个词元 3.5 MFLOPs，约 6500 万个参数，`x_1M` 与 $2M$，"
            "Llama 3 的 8B 模型。\n")
    assert [span for _, span in latin_magnitudes(text)] == [
        "65 M", "37 k", "100K", "{glue:text}`p:.1f` M", "{glue:text}`q:.1f` 百万"]
