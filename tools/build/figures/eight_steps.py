"""Draw Figure 2.1, the eight steps of multi-head self-attention, in English and Chinese.

Writes ``book/en/img/ch2-eight-steps.svg`` and ``book/zh/img/ch2-eight-steps.svg``. The drawing is
784 units wide, so in the book's ~790 px content column it is shown at a scale of about 1 and its
smallest text (13 units: sub/superscripts) stays at least 13 px tall. Input and title share the
top row, the two heads are parallel lanes (steps 2-6), concatenation and output sit bottom right.

Labels use a tiny markup: ``_x``/``^x`` (or ``_{xy}``/``^{xy}``) for a sub- or superscript; a
superscript right after a one-digit subscript is stacked above it (``W_1^Q``). Shifts use ``dy``,
which every renderer supports (``baseline-shift`` is ignored by some).

Usage: ``python -m tools.build.figures.eight_steps [--check]``; ``--check`` writes nothing and exits
1 if a file on disk differs from what would be written.
"""
from __future__ import annotations

import argparse
import re
import sys
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
W, H = 784, 610
BOX_W, BOX_H, GAP, X0 = 130, 100, 17, 38
COLS = [X0 + i * (BOX_W + GAP) for i in range(5)]
BAND_Y = (136, 302)  # top of each head's lane
ROW_Y = 488  # top of the concatenate/output row
RAIL_L, RAIL_R, JOIN_Y = 10, 774, 470
SUB, SUP, SMALL = 0.32, -0.42, 13  # sub/superscript shift (em of the base size) and size
GREY, HEAD1, HEAD2, GREEN = "#555", "#1565c0", "#e65100", "#2e7d32"
FILL = {GREY: "#f1f1f1", HEAD1: "#e3f2fd", HEAD2: "#fff3e0", GREEN: "#e8f5e9"}
LATIN = "Helvetica, Arial"
CJK = "Noto Sans CJK SC, Source Han Sans SC, PingFang SC, Microsoft YaHei"

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "aria": "Data flow of multi-head self-attention in eight steps",
        "title": "Multi-head self-attention in eight steps",
        "sub": "(n = 3 tokens, d_{model} = 4, h = 2 heads, d_k = d_v = 2)",
        "head": "head", "input": "Input", "weights": "Weights", "proj": "Projections",
        "scores": "Scores", "softmax": "Softmax", "out": "Head output", "cat": "Concatenate",
        "final": "Output", "each": "{} each", "rows": "rows sum to 1",
        "axis": "axis = −1 (over the keys)",
        "foot": "Steps 2–6 run independently (and in parallel)|for every head; the heads first "
                "interact|in steps 7–8.",
    },
    "zh": {
        "aria": "多头自注意力八个步骤的数据流",
        "title": "八步完成多头自注意力",
        "sub": "（n = 3 个词元，d_{model} = 4，h = 2 个头，d_k = d_v = 2）",
        "head": "头", "input": "输入", "weights": "权重矩阵", "proj": "线性投影",
        "scores": "缩放分数", "softmax": "softmax", "out": "头的输出", "cat": "拼接",
        "final": "输出投影", "each": "各 {}", "rows": "每行之和为 1",
        "axis": "axis = −1（沿键的方向）",
        "foot": "第 2～6 步在每个头内独立（并行）进行；|各个头直到第 7、8 步才互相交换信息。",
    },
}


def rich(markup: str, size: float) -> str:
    """SVG text content for ``markup``: plain runs, and ``tspan``s for sub/superscripts."""
    out, shift, prev = [], 0.0, ""
    for m in re.finditer(r"([_^])(\{[^}]*\}|.)|([^_^]+)", markup):
        if m.group(3) is not None:
            kind, text, target, fs = "", m.group(3), 0.0, size
        else:
            kind, text = m.group(1), m.group(2).strip("{}")
            target, fs = (SUB if kind == "_" else SUP) * size, SMALL
        attrs = f' dy="{target - shift:g}"' if target != shift else ""
        if kind == "^" and prev[:1] == "_" and len(prev) == 2:  # stack over a 1-digit subscript
            attrs = f' dx="{-0.556 * SMALL:.1f}"' + attrs
        if fs != size:
            attrs += f' font-size="{fs:g}"'
        out.append(f"<tspan{attrs}>{escape(text)}</tspan>" if attrs else escape(text))
        shift, prev = target, (kind + text if kind else "")
    return "".join(out)


def text(x: float, y: float, markup: str, size: float = 16, anchor: str = "middle",
         fill: str = "#222", bold: bool = False) -> str:
    """One line of text at baseline ``y``."""
    weight = ' font-weight="bold"' if bold else ""
    return (f'<text x="{x:g}" y="{y:g}" text-anchor="{anchor}" font-size="{size:g}" '
            f'fill="{fill}"{weight}>{rich(markup, size)}</text>')


def box(x: float, y: float, step: int, colour: str, lines: tuple[str, str, str]) -> list[str]:
    """A step box: number in a circle on its corner, a bold name, a formula and a shape."""
    cx = x + BOX_W / 2
    return [
        f'<rect x="{x:g}" y="{y:g}" width="{BOX_W}" height="{BOX_H}" rx="8" '
        f'fill="{FILL[colour]}" stroke="{colour}" stroke-width="1.6"/>',
        f'<circle cx="{x:g}" cy="{y:g}" r="12" fill="{colour}"/>',
        text(x, y + 5, str(step), 14, fill="#fff", bold=True),
        text(cx, y + 32, lines[0], bold=True),
        text(cx, y + 60, lines[1], 15),
        text(cx, y + 86, lines[2], 14, fill=GREY),
    ]


def arrow(points: list[tuple[float, float]]) -> str:
    """A polyline through ``points`` with an arrowhead at the end."""
    d = " ".join(f"{'M' if i == 0 else 'L'}{x:g},{y:g}" for i, (x, y) in enumerate(points))
    return (f'<path d="{d}" fill="none" stroke="{GREY}" stroke-width="1.5" '
            f'marker-end="url(#a)"/>')


def lane(t: dict[str, str], head: int) -> list[str]:
    """One head's lane: a dashed frame, its name, and steps 2-6 joined by arrows."""
    colour, top = (HEAD1, HEAD2)[head - 1], BAND_Y[head - 1]
    y, i = top + 40, head
    contents = [
        (t["weights"], f"W_{i}^Q, W_{i}^K, W_{i}^V", t["each"].format("4 × 2")),
        (t["proj"], f"Q_{i}, K_{i}, V_{i}", t["each"].format("3 × 2")),
        (t["scores"], f"Q_{i}K_{i}^T / √d_k", "3 × 3"),
        (t["softmax"], f"A_{i} = softmax(·)", t["rows"]),
        (t["out"], f"Z_{i} = A_{i}V_{i}", "3 × 2"),
    ]
    parts = [f'<rect x="22" y="{top}" width="742" height="152" rx="10" fill="none" '
             f'stroke="{colour}" stroke-width="1.2" stroke-dasharray="5 4"/>',
             text(X0, top + 20, f"{t['head']} {head}", 15, "start", colour, True)]
    for step, (x, lines) in enumerate(zip(COLS, contents), start=2):
        parts += box(x, y, step, colour, lines)
        if step < 6:
            parts.append(arrow([(x + BOX_W, y + 50), (x + BOX_W + GAP - 2, y + 50)]))
    return parts


def svg(lang: str) -> str:
    """The whole figure in ``lang``."""
    t = TEXT[lang]
    font = f"{LATIN}, {CJK}, sans-serif" if lang == "zh" else f"{LATIN}, sans-serif"
    mid = [BAND_Y[0] + 90, BAND_Y[1] + 90]  # vertical middle of each lane's boxes
    cat, fin = COLS[3], COLS[4]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
        f'height="{H}" font-family="{font}" font-size="16" role="img" '
        f'aria-label="{escape(t["aria"])}">',
        '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{GREY}"/>'
        '</marker></defs>',
        f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>',
        text(480, 56, t["title"], 19, bold=True),
        text(480, 86, t["sub"], 15),
        *box(X0, 20, 1, GREY, (t["input"], "X", "3 × 4")),
        arrow([(X0 + BOX_W / 2, 120), (X0 + BOX_W / 2, BAND_Y[0] + 38)]),
        arrow([(X0, 70), (RAIL_L, 70), (RAIL_L, mid[1]), (X0 - 2, mid[1])]),
        *lane(t, 1), *lane(t, 2),
        text(COLS[3] + BOX_W / 2, BAND_Y[0] + 20, t["axis"], 14, fill=GREY),
        *(f'<path d="M{COLS[4] + BOX_W},{m} L{RAIL_R},{m}" fill="none" stroke="{GREY}" '
          'stroke-width="1.5"/>' for m in mid),
        arrow([(RAIL_R, mid[0]), (RAIL_R, JOIN_Y), (cat + BOX_W / 2, JOIN_Y),
               (cat + BOX_W / 2, ROW_Y - 2)]),
        *box(cat, ROW_Y, 7, GREY, (t["cat"], "[ Z_1 | Z_2 ]", "3 × 4")),
        *box(fin, ROW_Y, 8, GREEN, (t["final"], "H = ZW^O", "3 × 4")),
        arrow([(cat + BOX_W, ROW_Y + 50), (fin - 2, ROW_Y + 50)]),
        *(text(X0, ROW_Y + 30 + 26 * k, line, 15, "start", "#333")
          for k, line in enumerate(t["foot"].split("|"))),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write both SVGs, or with ``--check`` report (exit 1) any that are out of date."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for lang in TEXT:
        path = ROOT / "book" / lang / "img" / "ch2-eight-steps.svg"
        want = svg(lang)
        if path.exists() and path.read_text(encoding="utf-8") == want:
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(want, encoding="utf-8")
    if stale:
        print(f"out of date (run {Path(__file__).name}): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
