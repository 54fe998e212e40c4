"""The instructors' page shows a classroom dry run: ``{class-report-example} mha-numpy``.

The directive runs the dry run of ``tools/classroom/dry_run.py`` for the chapter, in the page's
edition, while the page is read (a child process: a few seconds), and inserts the class report as
``python -m tools.classroom.assign dryrun <chapter> --lang <lang>`` prints it, in the page's
language. The page is read again when the chapter, its cases file
(``tools/classroom/cases/<chapter>.yml``) or a tool behind the report changes. A dry run that fails
stops the build.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[3]


class ClassReportExample(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        from tools.classroom import class_report, dry_run, exercises

        chapter, lang = self.arguments[0], self.config.book_lang
        for dep in (ROOT / "book" / lang / f"{chapter}.md", dry_run.CASES / f"{chapter}.yml",
                    dry_run.__file__, class_report.__file__, exercises.__file__):
            self.env.note_dependency(str(dep))
        try:
            with tempfile.TemporaryDirectory() as tmp:
                dry_run.run(chapter, lang, Path(tmp))
                text = class_report.report(Path(tmp) / "grades.csv", lang)
        except dry_run.DryRunError as e:
            raise ExtensionError(f"class-report-example {chapter}: {e}") from e
        node = nodes.literal_block(text, text, classes=["class-report"])
        node["language"] = "text"
        self.set_source_info(node)
        return [node]


def setup(app):
    app.setup_extension("tools.build.book_sphinx.i18n")  # book_lang
    app.add_directive("class-report-example", ClassReportExample)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
