"""Alt text in the chapter sources, before anything is built.

The built-site test (tests/build/test_a11y.py) finds an image without alt text only after the
whole book has been executed; these checks catch the two ways of adding one without alt text in a
second: a ``{figure}``/``{image}`` directive without ``:alt:``, and a code cell that draws a plot
without ``mystnb: image: alt:`` (or ``figure: alt:``) metadata.
"""
from __future__ import annotations

import re

import pytest
from tools.myst import HAN_RE

from chapter_source import LANGS, chapter_files, read_notebook

DIRECTIVE_RE = re.compile(r"^([`:]{3,})\{(figure|image)\}\s*(\S+)\n((?::[^\n]*\n)*)", re.M)
PLOT_RE = re.compile(r"\b(d2l\.plot|plt\.(subplots|figure|plot|imshow)|d2l\.show_heatmaps|"
                     r"show_heatmaps|book\.interactive)\(")
CJK = HAN_RE


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_directive_has_alt_text(lang):
    missing = []
    for path in chapter_files(lang):
        for m in DIRECTIVE_RE.finditer(path.read_text(encoding="utf-8")):
            alt = re.search(r"^:alt:\s*(.+)$", m.group(4), re.M)
            if not alt:
                missing.append(f"{path.name}: {m.group(3)}")
            elif (lang == "zh") != bool(CJK.search(alt.group(1))):
                missing.append(f"{path.name}: {m.group(3)} (alt text not in {lang})")
    assert not missing, f"{lang}: figures without alt text in their language: {missing}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_plotting_cell_has_alt_text(lang):
    missing = []
    for path in chapter_files(lang):
        for cell in read_notebook(path).cells:
            if cell.cell_type != "code":
                continue
            # a plot drawn at the top level of the cell (a helper's body, indented, draws
            # nothing until it is called)
            if not any(PLOT_RE.search(line) for line in cell.source.splitlines()
                       if line and not line[0].isspace()):
                continue
            meta = cell.metadata.get("mystnb", {})
            alt = (meta.get("image") or meta.get("figure") or {}).get("alt", "")
            if not alt or (lang == "zh") != bool(CJK.search(alt)):
                missing.append(f"{path.name}: {cell.source.splitlines()[0][:60]!r}")
    assert not missing, f"{lang}: plotting cells without alt text in their language: {missing}"
