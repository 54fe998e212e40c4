"""A section named in a sentence: its title in quotation marks, in both editions.

``{ref}`sec-x``` renders the title of the section it points to. Inside running text a bare
title reads as part of the sentence ("see Learned or fixed?." / "见 可学习的还是固定的？。"); the
book's one style is the title in quotation marks: “Learned or fixed?” in the English edition,
“可学习的还是固定的？” in the Chinese one (full-width marks, with no space between them and the
neighbouring text, as Chinese typesetting wants).

Left alone: a reference with its own text (``{ref}`the glossary <glossary>```), one the author
already quoted (``《{ref}`sec-x`》``), and one that stands on its own in its paragraph, list item
or table cell (a list of sections, "1. {ref}`sec-x`" in the preface's table), which is not in a
sentence.

``tests/build/test_book_build.py::test_section_titles_in_sentences_are_quoted`` checks the
pages.
"""
from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from tools.build.book_sphinx.cjk import ancestors

OPEN, CLOSE = "“", "”"
#: marks that already enclose a title (the author's own quoting)
QUOTED_BEFORE = "“‘《「\"'"
QUOTED_AFTER = "”’》」\"'"
#: a letter of any script (not a digit): text that makes a sentence around a reference
LETTER_RE = re.compile(r"[^\W\d_]")


def _text_around(node: nodes.Node) -> tuple[nodes.Text | None, nodes.Text | None]:
    parent = node.parent
    i = parent.index(node)
    before = parent[i - 1] if i > 0 else None
    after = parent[i + 1] if i + 1 < len(parent) else None
    return (before if isinstance(before, nodes.Text) else None,
            after if isinstance(after, nodes.Text) else None)


def _block(node: nodes.Node) -> nodes.Element | None:
    """The paragraph (or term, or caption) a reference sits in."""
    while node is not None and not isinstance(node, nodes.TextElement):
        node = node.parent
    return node


def in_a_sentence(node: addnodes.pending_xref) -> bool:
    """Whether the reference sits in running text: its paragraph has words besides it (a
    number or a colon alone, as in a list of sections, is not a sentence)."""
    block = _block(node.parent)
    if block is None:
        return False
    rest = "".join(t.astext() for t in block.findall(nodes.Text)
                   if not any(a is node for a in ancestors(t)))
    return bool(LETTER_RE.search(rest))


class QuoteSectionTitles(SphinxPostTransform):
    """Put the title a ``{ref}`` renders in quotation marks (before the references are
    resolved, priority 10: the node still says whether its text is the author's)."""

    default_priority = 5

    def run(self, **kwargs) -> None:
        zh = self.config.book_lang == "zh"
        for ref in list(self.document.findall(addnodes.pending_xref)):
            if ref.get("refdomain") != "std" or ref.get("reftype") != "ref":
                continue
            if ref.get("refexplicit") or not in_a_sentence(ref):
                continue
            before, after = _text_around(ref)
            last = str(before).rstrip()[-1:] if before is not None else ""
            first = str(after).lstrip()[:1] if after is not None else ""
            if (last and last in QUOTED_BEFORE) or (first and first in QUOTED_AFTER):
                continue
            parent = ref.parent
            i = parent.index(ref)
            left, right = OPEN, CLOSE
            if zh:  # full-width marks take no space beside them
                if before is not None:
                    parent[i - 1] = nodes.Text(str(before).rstrip(" \n"))
                if after is not None:
                    parent[i + 1] = nodes.Text(str(after).lstrip(" \n"))
            parent.insert(i + 1, nodes.Text(right))
            parent.insert(i, nodes.Text(left))


def setup(app):
    app.setup_extension("tools.build.book_sphinx.i18n")  # registers ``book_lang``
    app.add_post_transform(QuoteSectionTitles)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
