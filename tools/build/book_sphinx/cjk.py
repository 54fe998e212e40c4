"""The zh edition: soft line breaks of the source between two Chinese characters are dropped.

A soft break renders as a space; English needs it, Chinese has none between words.
"""
from __future__ import annotations

import re

from docutils import nodes
from tools.myst import CJK_RE

#: full-width punctuation (CJK symbols and punctuation, full-width forms): （，。） and the like
PUNCT_RE = re.compile("[\u3000-\u303f\uff00-\uffef]")

_VERBATIM = (nodes.FixedTextElement, nodes.literal, nodes.math, nodes.raw, nodes.comment)


def join_cjk_lines(app, doctree, docname=None):
    """Drop the line breaks of the Chinese source between two Chinese characters.

    Browsers render a soft line break as a space, which in Chinese text shows as a stray gap
    in the middle of a sentence (English needs the space; Chinese has none between words).
    A break next to a Latin letter, a digit or inline code stays a space, unless the other side
    is full-width punctuation (``$x$\n（`` renders ``$x$（``). Code, literals and math are
    left alone. Explicit spaces (around a cross-reference, say) are the author's.
    """
    if app.config.book_lang != "zh":
        return
    for text in list(doctree.findall(nodes.Text)):
        if "\n" not in text:
            continue
        parent = text.parent
        if parent is None or any(isinstance(a, _VERBATIM) for a in ancestors(text)):
            continue
        # by identity: Element.index compares by value, and every soft break is an equal "\n"
        i = next(k for k, child in enumerate(parent.children) if child is text)
        before = next((t[-1] for t in (c.astext() for c in reversed(parent.children[:i])) if t), "")
        after = next((t[0] for t in (c.astext() for c in parent.children[i + 1:]) if t), "")
        s = str(text)
        out = []
        for j, ch in enumerate(s):
            if ch == "\n":
                left = s[j - 1] if j > 0 else before
                right = s[j + 1] if j + 1 < len(s) else after
                if CJK_RE.match(left or " ") and CJK_RE.match(right or " "):
                    continue
                if PUNCT_RE.match(left or " ") or PUNCT_RE.match(right or " "):
                    continue  # full-width punctuation takes no space, beside math neither
            out.append(ch)
        joined = "".join(out)
        if joined != s:
            new = nodes.Text(joined)
            new.parent = parent
            parent.children[i] = new


def ancestors(node):
    """The node's parents, nearest first."""
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def setup(app):
    # once references and glue are resolved: their final text decides what a break sits between
    app.setup_extension("tools.build.book_sphinx.i18n")  # registers ``book_lang``
    app.connect("doctree-resolved", join_cjk_lines)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
