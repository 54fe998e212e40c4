"""Every public docstring of d2lmini is valid reStructuredText.

The API pages (book/*/api.md) render the docstrings with autodoc, and the book is built with
warnings as errors: a docstring such as ``state_dict``s (an inline literal run into a letter)
stops the whole build after half an hour of execution. Parsing each docstring with docutils here
finds that in a second. (Google-style sections are converted by napoleon first, as the build
does.)
"""
from __future__ import annotations

import inspect

import docutils.utils
import pytest
from sphinx.ext.napoleon import Config, GoogleDocstring

import d2lmini


def _public_objects():
    for module in d2lmini.MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # data (a dict, a str): its docstring is its type's
            yield f"{module.__name__}.{name}", obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and inspect.getdoc(member):
                        yield f"{module.__name__}.{name}.{attr}", member


def problems(doc: str) -> list[str]:
    """docutils' warnings and errors about ``doc`` (after napoleon), first line of each;
    Sphinx-only roles and directives, which plain docutils does not know, are not problems."""
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser

    rst = str(GoogleDocstring(doc, Config(napoleon_use_param=True)))
    found: list[str] = []

    def observer(msg):
        if msg["level"] >= docutils.utils.Reporter.WARNING_LEVEL:
            found.append(msg.astext().splitlines()[0])

    settings = get_default_settings(Parser)
    settings.report_level, settings.halt_level, settings.warning_stream = 5, 5, False
    document = docutils.utils.new_document("<docstring>", settings)
    document.reporter.attach_observer(observer)
    Parser().parse(rst, document)
    return [p for p in found if "Unknown interpreted text role" not in p
            and "Unknown directive type" not in p and 'No role entry for' not in p
            and 'No directive entry for' not in p]


@pytest.mark.parametrize("name,obj", list(_public_objects()), ids=lambda v: v
                         if isinstance(v, str) else "")
def test_docstring_is_valid_rst(name, obj):
    doc = inspect.getdoc(obj)
    assert doc, f"{name} has no docstring"
    assert not problems(doc), f"{name}: {problems(doc)}"


def test_the_check_can_fail():
    assert problems("The mean of checkpoints (``state_dict``s) of one model.")
