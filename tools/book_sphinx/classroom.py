"""The instructors' page shows a classroom dry run: ``{class-report-example} mha-numpy``.

The directive runs the dry run of ``tools/classroom.py`` for the chapter, in the page's edition,
while the page is read (a child process: a few seconds), and inserts the class report as
``python tools/assign.py dryrun <chapter> --lang <lang>`` prints it, in the page's language. The
page is read again when the chapter, its cases file (``tools/classroom/<chapter>.yml``) or a tool
behind the report changes. A dry run that fails stops the build.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

TOOLS = Path(__file__).resolve().parent.parent
ROOT = TOOLS.parent


class ClassReportExample(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        import class_report
        import classroom

        chapter, lang = self.arguments[0], self.config.book_lang
        for dep in (ROOT / "book" / lang / f"{chapter}.md", classroom.CASES / f"{chapter}.yml",
                    TOOLS / "classroom.py", TOOLS / "class_report.py", TOOLS / "exercises.py"):
            self.env.note_dependency(str(dep))
        try:
            with tempfile.TemporaryDirectory() as tmp:
                classroom.run(chapter, lang, Path(tmp))
                text = class_report.report(Path(tmp) / "grades.csv", lang)
        except classroom.DryRunError as e:
            raise ExtensionError(f"class-report-example {chapter}: {e}") from e
        node = nodes.literal_block(text, text, classes=["class-report"])
        node["language"] = "text"
        self.set_source_info(node)
        return [node]


def setup(app):
    app.setup_extension("book_sphinx.i18n")  # book_lang
    app.add_directive("class-report-example", ClassReportExample)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
