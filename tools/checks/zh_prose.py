"""Hard line breaks inside Chinese prose: find them (the tests) and join them (``--write``).

Chinese has no spaces between words, so a line broken inside a sentence of the Markdown source
shows as a stray space in a rendered page, and as a broken line in an exported notebook, where
Jupyter renders every line break of a Markdown cell. The zh chapters therefore write one
paragraph per line. Prose is everything outside code cells, math blocks and plain code fences;
directive bodies (exercise, solution, note, figure captions) are prose too. ::

    python -m tools.checks.zh_prose            # list hard breaks in book/zh/*.md (exit 1 if any)
    python -m tools.checks.zh_prose --write    # join them
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from tools import myst

ROOT = Path(__file__).resolve().parents[2]
CJK = re.compile(f"[{myst.CJK}“”‘’]")  # Chinese text, and the curly quotes it uses
# full-width punctuation: no space on either side of it
CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uffef“”‘’]")
FENCE = re.compile(r"^(\s*)(`{3,}|:{3,})(.*)$")
CODE_INFO = re.compile(r"^(\{code-cell\}|\{math\}|\{code-block\}|\{code\}|[A-Za-z0-9_+-]*$)")
# a line that starts a block of its own, never the continuation of a paragraph
BLOCK_START = re.compile(r"^\s*([-*+] |\d+\. |#|\||\$\$|\(.*\)=\s*$|<|:[a-z-]+:|\{|---|```|:::)")


def _prose_flags(lines: list[str]) -> list[bool]:
    """For each line, whether it is prose (a line of a paragraph that may be joined)."""
    flags, stack, in_math = [], [], False
    for line in lines:
        m = FENCE.match(line)
        if m and stack and m.group(2)[0] == stack[-1][0][0] and len(m.group(2)) >= len(
                stack[-1][0]) and not m.group(3).strip():
            stack.pop()
            flags.append(False)
            continue
        if m and m.group(3).strip() and not (stack and stack[-1][1]):
            stack.append((m.group(2), bool(CODE_INFO.match(m.group(3).strip()))))
            flags.append(False)
            continue
        if m and not stack:  # a bare ``` opens a plain code block
            stack.append((m.group(2), True))
            flags.append(False)
            continue
        if line.strip() == "$$":
            in_math = not in_math
            flags.append(False)
            continue
        code = bool(stack and stack[-1][1])
        flags.append(not code and not in_math and bool(line.strip()))
    return flags


def hard_breaks(text: str) -> list[int]:
    """1-based numbers of the lines that end a line of Chinese prose which the next line
    continues (a break inside a paragraph)."""
    lines = text.split("\n")
    flags = _prose_flags(lines)
    found = []
    for i in range(len(lines) - 1):
        a, b = lines[i], lines[i + 1]
        if not (flags[i] and flags[i + 1]) or BLOCK_START.match(b) or BLOCK_START.match(a):
            continue
        if a.rstrip().endswith("  ") or a.rstrip().endswith("\\"):
            continue  # an intended Markdown line break
        if CJK.search(a.rstrip()[-1:]) or CJK.search(b.lstrip()[:1]):
            found.append(i + 1)
    return found


def join_breaks(text: str) -> str:
    """``text`` with every hard break inside Chinese prose joined: no space between two Chinese
    characters or next to full-width punctuation, one space where Chinese meets Latin text, code
    or maths (the book's convention: 用 `select` 跟踪)."""
    lines = text.split("\n")
    for n in reversed(hard_breaks(text)):
        a, b = lines[n - 1].rstrip(), lines[n].lstrip()
        both_cjk = CJK.search(a[-1:]) and CJK.search(b[:1])
        glue = "" if both_cjk or CJK_PUNCT.search(a[-1:]) or CJK_PUNCT.search(b[:1]) else " "
        lines[n - 1:n + 1] = [a + glue + b]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true", help="join the breaks in place")
    p.add_argument("files", nargs="*", type=Path)
    args = p.parse_args(argv)
    files = args.files or sorted((ROOT / "book" / "zh").glob("*.md"))
    total = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        found = hard_breaks(text)
        total += len(found)
        if found and args.write:
            path.write_text(join_breaks(text), encoding="utf-8")
        for n in found:
            print(f"{path.name}:{n}: {text.split(chr(10))[n - 1][-40:]!r}")
    if args.write:
        print(f"joined {total} hard breaks")
        return 0
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
