"""The student edition: exercise solutions removed, gated ones with their code cells.

sphinx-exercise's ``hide_solutions`` drops ``solution`` blocks and the ``solution-start`` marker,
but leaves the content between ``solution-start`` and ``solution-end`` (prose and code cells) in
the page and then fails on the orphaned end marker. In the student edition the two gated
directives are replaced by markers, and everything between them is removed.
"""
from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective


class hidden_solution_start(nodes.Element):
    pass


class hidden_solution_end(nodes.Element):
    pass


class HiddenSolutionStart(SphinxDirective):
    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = False
    has_content = False
    option_spec: ClassVar[dict] = {"label": directives.unchanged, "class": directives.class_option,
                   "hidden": directives.flag}

    def run(self):
        node = hidden_solution_start()
        self.set_source_info(node)
        return [node]


class HiddenSolutionEnd(SphinxDirective):
    has_content = False

    def run(self):
        node = hidden_solution_end()
        self.set_source_info(node)
        return [node]


def remove_gated_solutions(app, doctree):
    for start in list(doctree.findall(hidden_solution_start)):
        parent = start.parent
        i = parent.index(start)
        j = i + 1
        while j < len(parent) and not isinstance(parent[j], hidden_solution_end):
            j += 1
        if j == len(parent):
            raise ExtensionError(
                f"{start.source}:{start.line}: "
                "solution-start without a solution-end at the same level"
            )
        del parent[i : j + 1]
    for end in list(doctree.findall(hidden_solution_end)):
        raise ExtensionError(f"{end.source}:{end.line}: solution-end without a solution-start")


def _student_mode(app, config):
    if config.hide_solutions:
        app.add_directive("solution-start", HiddenSolutionStart, override=True)
        app.add_directive("solution-end", HiddenSolutionEnd, override=True)


def setup(app):
    app.setup_extension("sphinx_exercise")
    app.add_node(hidden_solution_start)
    app.add_node(hidden_solution_end)
    app.connect("config-inited", _student_mode)
    app.connect("doctree-read", remove_gated_solutions, priority=100)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
