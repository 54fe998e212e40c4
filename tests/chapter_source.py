"""Reading the chapters' MyST source (parity, text checks, @save blocks, export tests).

Everything here parses the MyST Markdown chapters in ``book/zh`` and ``book/en`` without
executing them.
"""
from __future__ import annotations

import difflib
import io
import re
import tokenize
from pathlib import Path

from tools import myst
from tools.bookmeta import BOOK, LANGS, ROOT, chapters  # noqa: F401  (re-exported for the tests)

CHAPTERS = frozenset(chapters())  # _toc.yml's chapters and appendices; the rest is back matter

LABEL_RE = re.compile(r"^\(([A-Za-z0-9_:.\-]+)\)=\s*$", re.M)
HEADING_RE = re.compile(r"^(#{1,6})\s+\S")
GLUE_USE_RE = re.compile(r"\{glue(?::[a-z]+)?\}`([^`]+)`")
GLUE_DEF_RE = re.compile(r"""\b(?:glue|glue_ratio|choose)\(\s*(f?)(['"])([^'"]+)\2""")
CITE_RE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
REF_RE = re.compile(r"\{(?:ref|numref|eq)\}`([^`]+)`")
FIG_RE = re.compile(r"^\s*[`:]{3,}\{(figure|image)\}\s*(\S+)", re.M)
EXERCISE_RE = re.compile(r"^([`:]{3,})\{exercise\}[^\n]*\n(.*?)^\1\s*$", re.M | re.S)
SOLUTION_RE = re.compile(r"^[`:]{3,}\{(solution|solution-start)\}\s*(\S+)", re.M)


def chapter_files(lang: str, suffix: str = ".md") -> list[Path]:
    return sorted((BOOK / lang).glob(f"*{suffix}"))


def all_relpaths(lang: str) -> set[str]:
    base = BOOK / lang
    return {
        p.relative_to(base).as_posix()
        for p in base.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(base).parts)
    }


def pair_names() -> list[str]:
    return sorted({p.name for lang in LANGS for p in chapter_files(lang)})


def is_chapter(name: str) -> bool:
    return Path(name).stem in CHAPTERS


def read_notebook(path: Path):
    return myst.read_notebook(path)


def header(text: str) -> str:
    """The YAML front matter (between the first two ``---`` lines), or ''."""
    m = re.match(r"\A---\n(.*?\n)---\n", text, re.S)
    return m.group(1) if m else ""


def strip_comments(src: str) -> str:
    """Remove ``#`` comments (tokenize keeps ``#`` inside strings), trailing spaces, blank lines.

    IPython magics (``%``/``!`` lines) are kept verbatim after removing a trailing comment-free
    normalisation, because they are not Python.
    """
    lines = src.splitlines()
    magic = {i: ln for i, ln in enumerate(lines) if ln.lstrip().startswith(("%", "!"))}
    py = "\n".join("pass" if i in magic else ln for i, ln in enumerate(lines)) + "\n"
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(py).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        out = [re.sub(r"\s+#[^'\"]*$", "", ln).rstrip() for ln in lines]
        return "\n".join(ln for ln in out if ln.strip())
    comments: dict[int, int] = {}
    for tok in toks:
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.start[1]
    out = []
    for i, ln in enumerate(lines, start=1):
        if (i - 1) in magic:
            out.append(magic[i - 1].rstrip())
            continue
        if i in comments:
            ln = ln[: comments[i]]
        ln = ln.rstrip()
        if ln.strip():
            out.append(ln)
    return "\n".join(out)


_LANGUAGE_CALLS = {"claim", "choose"}  # book.claim / book.choose: their sentences are prose


def mask_claim_text(src: str) -> str:
    """``src`` with the sentences passed to ``book.claim``/``book.choose`` replaced by ``"…"``.

    The claims' statements and the phrases of a choice are prose, written in each edition's
    language; the claim's name (its first argument), its condition and its values are code and
    must stay identical. Sources that do not tokenize are returned unchanged.
    """
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return src
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    i = 0
    while i < len(toks):
        tok = toks[i]
        if (tok.type == tokenize.NAME and tok.string in _LANGUAGE_CALLS and i >= 2
                and toks[i - 1].string == "." and i + 1 < len(toks) and toks[i + 1].string == "("):
            depth, arg, j = 0, 0, i + 1
            while j < len(toks):
                t = toks[j]
                if t.string in "([{" and t.type == tokenize.OP:
                    depth += 1
                elif t.string in ")]}" and t.type == tokenize.OP:
                    depth -= 1
                    if depth == 0:
                        break
                elif t.string == "," and t.type == tokenize.OP and depth == 1:
                    arg += 1
                elif arg > 0 and t.type == tokenize.STRING:
                    spans.append((t.start, t.end))
                elif arg > 0 and fstring_start is not None and t.type == fstring_start:
                    k = j
                    while toks[k].type != fstring_end:
                        k += 1
                    spans.append((t.start, toks[k].end))
                    j = k
                j += 1
            i = j
        i += 1
    lines = src.splitlines(keepends=True)
    for (r0, c0), (r1, c1) in reversed(spans):
        head, tail = lines[r0 - 1][:c0], lines[r1 - 1][c1:]
        lines[r0 - 1: r1] = [head + '"…"' + tail]
    return "".join(lines)


def code_cells(nb) -> list[tuple[int, str, list]]:
    """(index among code cells, comment-stripped source, tags) for every code cell."""
    res = []
    k = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = sorted(cell.metadata.get("tags", []))
        res.append((k, mask_claim_text(strip_comments(cell.source)), tags))
        k += 1
    return res


def prose(text: str) -> str:
    """The Markdown text with code-cell bodies removed (so ``{glue}`` roles in code don't count)."""
    return myst.without_code_cells(text)


# fenced blocks whose body is not prose (code, math, raw reST/HTML); other directives (figure,
# exercise, solution, note, list-table...) keep their body, which the reader sees as text
_NON_PROSE_BLOCKS = {"code-cell", "math", "eval-rst", "raw", "bibliography", "nb-exec-table"}
_INLINE_STRIP = [
    re.compile(r"\$\$.*?\$\$", re.S),                    # display math on one line
    re.compile(r"(?<![\\$])\$(?!\$)[^$\n]+?\$"),          # inline math
    re.compile(r"\{(?:ref|numref|eq|cite|cite:[a-z]+|glue|glue:[a-z]+|doc|download)\}`[^`]*`"),
    re.compile(r"``[^`]+``|`[^`\n]+`"),                   # inline code
    re.compile(r"\]\([^)]*\)"),                           # link targets [text](url)
    re.compile(r"https?://\S+"),
]


def _not_prose(text: str, offset: int = 0) -> set[int]:
    """The lines of ``text`` (numbered from ``offset``) a reader does not read as prose: code and
    other non-prose fences whole, the fence lines of prose directives and, inside them, the same
    again (a directive's body is Markdown), display math."""
    gone = {offset + k for start, end in myst.math_blocks(text) for k in range(start, end)}
    for fence in myst.fences(text):
        first, last = offset + fence.start, offset + fence.end
        if fence.directive is None or fence.directive in _NON_PROSE_BLOCKS:
            gone.update(range(first, last))
            continue
        gone.update({first, last - 1})  # the fences; the option lines go with the rest below
        gone |= _not_prose(fence.body, first + 1)
    return gone


def plain_prose(text: str) -> str:
    """The text a reader reads, line for line (the result has as many lines as ``text``).

    Removed (replaced by nothing, keeping the line): the YAML header, code cells and plain code
    fences, math blocks (``{math}`` and ``$$ ... $$`` over several lines), raw blocks, MyST labels
    ``(name)=``, directive options (``:label: ...``), inline math, inline code, the targets of
    roles (``{ref}`...```, ``{cite}`...```, ``{glue:text}`...```) and link targets. What stays:
    paragraphs, headings, list items, table cells, figure captions, exercise and solution text.
    The blocks are found by markdown-it-py (:func:`tools.myst.fences`), as myst-parser finds them.
    """
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":  # YAML header
        start = next((j for j in range(1, len(lines)) if lines[j].strip() == "---"),
                     len(lines) - 1) + 1
    body = "\n".join([""] * start + lines[start:])
    gone = set(range(start)) | _not_prose(body)
    out = []
    for k, ln in enumerate(lines):
        if k in gone or re.match(r"^\s*:[A-Za-z-]+:", ln) or LABEL_RE.match(ln):
            out.append("")
            continue
        for pat in _INLINE_STRIP:
            ln = pat.sub(" ", ln)
        out.append(ln)
    return "\n".join(out)


def headings(text: str) -> list[int]:
    """Heading levels in order, ignoring lines inside fenced blocks (code, directives)."""
    inside = {k for f in myst.fences(text) for k in range(f.start, f.end)}
    return [len(h.group(1)) for k, ln in enumerate(text.split("\n"))
            if k not in inside and (h := HEADING_RE.match(ln))]


def exercise_labels(text: str) -> list[str]:
    labels = []
    for m in EXERCISE_RE.finditer(text):
        lm = re.search(r"^:label:\s*(\S+)", m.group(2), re.M)
        labels.append(lm.group(1) if lm else "<exercise without :label:>")
    return labels


def solution_targets(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in SOLUTION_RE.finditer(text)]


def directive_labels(text: str) -> list[str]:
    return re.findall(r"^:(?:label|name):\s*(\S+)", text, re.M)


def glue_uses(text: str) -> set[str]:
    return {m.group(1).split(":")[0].strip() for m in GLUE_USE_RE.finditer(prose(text))}


def glue_defs(nb) -> set[str]:
    names = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            names |= {m.group(1) + m.group(3) for m in GLUE_DEF_RE.finditer(cell.source)}
    return names


def glue_defined(name: str, defs: set[str]) -> bool:
    """Is ``name`` produced by one of ``defs``? An f-string ``f"ch7_x_{k}"`` matches ``ch7_x_*``."""
    for d in defs:
        if d.startswith("f"):
            pat = "".join(".+" if part.startswith("{") else re.escape(part)
                          for part in re.split(r"(\{[^}]*\})", d[1:]))
            if re.fullmatch(pat, name):
                return True
        elif d == name:
            return True
    return False


def cite_keys(text: str) -> set[str]:
    keys = set()
    for m in CITE_RE.finditer(prose(text)):
        keys |= {k.strip() for k in m.group(1).split(",") if k.strip()}
    return keys


def ref_targets(text: str) -> set[str]:
    out = set()
    for m in REF_RE.finditer(prose(text)):
        t = m.group(1)
        am = re.search(r"<([^>]+)>\s*$", t)
        out.add(am.group(1) if am else t.strip())
    return out


def figure_targets(text: str, lang: str) -> list[str]:
    res = []
    for _kind, target in FIG_RE.findall(text):
        res.append(re.sub(rf"(^|/)({lang})(/|$)", r"\1<lang>\3", target))
    return res


def udiff(a, b, name_a="zh", name_b="en") -> str:
    if isinstance(a, str):
        a = a.splitlines()
    if isinstance(b, str):
        b = b.splitlines()
    return "\n".join(
        difflib.unified_diff([str(x) for x in a], [str(x) for x in b], name_a, name_b, lineterm="")
    )


#: Citations that differ between the editions on purpose: {zh key: en key}. The Chinese edition
#: cites the Chinese edition of *Dive into Deep Learning* (《动手学深度学习》), the English edition
#: the English one; everything else is cited identically.
EDITION_CITES = {"zhang2023dive_zh": "zhang2023dive"}


def edition_cite_keys(text: str, lang: str) -> set[str]:
    """The {cite} keys of a page, with the zh-only keys mapped to their English counterparts."""
    keys = cite_keys(text)
    return {EDITION_CITES.get(k, k) for k in keys} if lang == "zh" else keys


def compare_pair(zh_path: Path, en_path: Path) -> list[str]:
    """All parity problems between two chapter files, as human-readable messages."""
    problems: list[str] = []
    zt = zh_path.read_text(encoding="utf-8")
    et = en_path.read_text(encoding="utf-8")
    name = en_path.name
    if header(zt) != header(et):
        problems.append(f"{name}: jupytext headers differ:\n{udiff(header(zt), header(et))}")
    znb, enb = read_notebook(zh_path), read_notebook(en_path)
    zc, ec = code_cells(znb), code_cells(enb)
    if len(zc) != len(ec):
        problems.append(
            f"{name}: {len(zc)} code cells in zh, {len(ec)} in en; first cell sources:\n"
            + udiff([c[1].splitlines()[0] if c[1] else "" for c in zc],
                    [c[1].splitlines()[0] if c[1] else "" for c in ec])
        )
    for (k, zs, ztags), (_, es, etags) in zip(zc, ec):
        if zs != es:
            problems.append(
                f"{name}: code cell #{k + 1} differs (comments stripped):\n" + udiff(zs, es)
            )
        if ztags != etags:
            problems.append(f"{name}: code cell #{k + 1} tags differ: zh {ztags} vs en {etags}")
    checks = [
        ("MyST labels (name)=", LABEL_RE.findall(zt), LABEL_RE.findall(et)),
        ("heading levels", headings(zt), headings(et)),
        ("exercise labels", exercise_labels(zt), exercise_labels(et)),
        ("solutions", solution_targets(zt), solution_targets(et)),
        ("directive :label:s", directive_labels(zt), directive_labels(et)),
        ("figure/image targets", figure_targets(zt, "zh"), figure_targets(et, "en")),
        ("glue names used in prose", sorted(glue_uses(zt)), sorted(glue_uses(et))),
        ("glue names defined", sorted(glue_defs(znb)), sorted(glue_defs(enb))),
        ("{cite} keys", sorted(edition_cite_keys(zt, "zh")), sorted(edition_cite_keys(et, "en"))),
    ]
    for what, a, b in checks:
        if a != b:
            problems.append(f"{name}: {what} differ:\n{udiff(a, b)}")
    return problems
