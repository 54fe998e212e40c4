"""The API page lists every public module of d2lmini, from ``d2lmini.MODULES`` and then
``d2lmini.book.MODULES`` (the book's plumbing).

``book/<lang>/api.md`` writes the marker block

    ```{d2lmini-modules}
    ```

where the modules go; on ``source-read`` this extension replaces it with one section per module
of ``d2lmini.MODULES`` (in that order: the order the book introduces them), then of
``d2lmini.book.MODULES``, each with its label ``sec-api-<module>`` (``sec-api-book-claims``),
its heading and an ``automodule`` block. A module added to the package appears on the page
without anyone editing it. A change to a docstring reads every page again
(``book_library_files``), so the page never shows an older docstring. (``tools/build/book_sphinx/
claims.py`` loads this extension.)
"""
from __future__ import annotations

import re

MARKER = re.compile(r"^```\{d2lmini-modules\}[^\n]*\n```[ \t]*$", re.M)


def module_sections(modules: list[str]) -> str:
    """MyST text of the API page's module sections, for module names such as ``'utils'``."""
    parts = []
    for name in modules:
        if not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?", name):
            raise ValueError(f"not a d2lmini module name: {name!r}")
        parts.append(f"(sec-api-{name.replace('_', '-').replace('.', '-')})=\n"
                     f"## `d2lmini.{name}`\n\n"
                     "```{eval-rst}\n"
                     f".. automodule:: d2lmini.{name}\n"
                     "   :members:\n"
                     "   :show-inheritance:\n"
                     "```\n")
    return "\n".join(parts)


def public_modules() -> list[str]:
    """The names under ``d2lmini`` of ``d2lmini.MODULES`` and ``d2lmini.book.MODULES``
    (``['utils', 'attention', …, 'book.claims', …]``)."""
    import d2lmini

    return [m.__name__.removeprefix("d2lmini.")
            for m in (*d2lmini.MODULES, *d2lmini.book.MODULES)]


def expand(text: str, modules: list[str] | None = None) -> str:
    """``text`` with its ``d2lmini-modules`` marker replaced by the module sections."""
    if not MARKER.search(text):
        return text
    sections = module_sections(public_modules() if modules is None else modules)
    return MARKER.sub(lambda _: sections, text, count=1)


def source_read(app, docname, source) -> None:
    if MARKER.search(source[0]):
        import d2lmini

        source[0] = expand(source[0])
        app.env.note_dependency(d2lmini.__file__)  # a module added to MODULES: read again


def setup(app):
    # every byte of the package, docstrings included (tools/build/build_book.py sets it): the pages
    # are read again when it changes, so the API page shows the docstrings of this build's code (the
    # executed chapters are keyed by the code alone, d2lmini.book.library_fingerprint)
    app.add_config_value("book_library_files", "", "env")
    app.connect("source-read", source_read)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
