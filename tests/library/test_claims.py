"""d2lmini.book.claims: a sentence that interprets a result is guarded (``claim``) or chosen
(``choose``) by the code, and recorded for the execution report as a hidden glue output."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import d2lmini as d2l
from d2lmini import book
from d2lmini.book import claims


@pytest.fixture
def glued(monkeypatch):
    """What myst_nb.glue receives, as (name, mime bundle, display), instead of displaying it."""
    import myst_nb

    calls = []

    def fake_glue(name, value, display=True):
        from IPython.core.formatters import format_display_data

        bundle = format_display_data(value)[0]  # what myst_nb.glue records
        calls.append((name, bundle, display))

    monkeypatch.setattr(myst_nb, "glue", fake_glue)
    return calls


def records(glued) -> dict[str, dict]:
    return {name[len(claims.CLAIM_PREFIX):]: bundle[claims.CLAIM_MIME]
            for name, bundle, _ in glued if name.startswith(claims.CLAIM_PREFIX)}


def test_the_api_is_exported():
    assert book.claim is claims.claim and book.choose is claims.choose
    assert book.ClaimError is claims.ClaimError and issubclass(book.ClaimError, AssertionError)
    assert claims.CLAIM_PREFIX == "claim__"
    assert claims in book.MODULES and claims not in d2l.MODULES  # the book's, not the model's
    assert not hasattr(d2l, "claim")  # the top level is the Transformer


def test_a_claim_that_holds_is_recorded_hidden(glued):
    assert book.claim("ch0_lower", 0.70 < 0.71, "PE lowered the similarity",
                     plain=np.float32(0.71), with_pe=0.70, n=np.int64(3)) is None
    (name, bundle, display), = glued
    assert name == "claim__ch0_lower" and display is False
    assert bundle[claims.CLAIM_MIME] == {
        "name": "ch0_lower", "kind": "guarded", "statement": "PE lowered the similarity",
        "holds": True, "values": {"plain": pytest.approx(0.71), "with_pe": 0.70, "n": 3}}
    assert "ch0_lower" in bundle["text/plain"] and "guarded" in bundle["text/plain"]
    assert type(bundle[claims.CLAIM_MIME]["values"]["n"]) is int


def test_a_false_claim_fails_naming_it_and_records_nothing(glued):
    with pytest.raises(book.ClaimError, match=r"ch0_copies.*copied every sequence.*acc"):
        book.claim("ch0_copies", 0.9 == 1.0, "the model copied every sequence", acc=0.9)
    assert glued == []


@pytest.mark.parametrize("condition, holds", [(np.bool_(True), True), (np.float64(2) > 1, True),
                                              (torch.tensor(1.0) > 2, False)])
def test_numpy_and_tensor_bools_count(glued, condition, holds):
    if holds:
        book.claim("ch0_np", condition, "it holds")
        assert records(glued)["ch0_np"]["holds"] is True
    else:
        with pytest.raises(book.ClaimError):
            book.claim("ch0_np", condition, "it holds")


@pytest.mark.parametrize("name", ["", "0ch", "ch6 avg", "ch6-avg", None, 6])
def test_a_bad_name_is_refused(glued, name):
    with pytest.raises(ValueError, match="name must be a glue-style name"):
        book.claim(name, True, "a sentence")
    with pytest.raises(ValueError, match="name must be a glue-style name"):
        book.choose(name, True, "yes", "no")


@pytest.mark.parametrize("statement", ["", "   ", None, 3])
def test_an_empty_statement_is_refused(glued, statement):
    with pytest.raises(ValueError, match="statement must be the sentence"):
        book.claim("ch0_x", True, statement)
    with pytest.raises(ValueError, match="statement must be the sentence"):
        book.choose("ch0_x", True, "yes", statement)
    assert glued == []


@pytest.mark.parametrize("condition", [1, 0.5, "yes", None, np.array([True, False]),
                                       torch.tensor([True])])
def test_a_condition_that_is_not_a_bool_is_refused(glued, condition):
    with pytest.raises(TypeError, match="condition of claim 'ch0_x' must be a bool"):
        book.claim("ch0_x", condition, "a sentence")
    with pytest.raises(TypeError, match="condition of claim 'ch0_x' must be a bool"):
        book.choose("ch0_x", condition, "yes", "no")


@pytest.mark.parametrize("condition, phrase", [(True, "translated it correctly"),
                                               (False, "translated it as")])
def test_choose_glues_the_true_phrase_and_records_the_branch(glued, condition, phrase):
    got = book.choose("ch0_calm", condition, "translated it correctly", "translated it as",
                     translation="il est calme .")
    assert got == phrase
    shown = {name: bundle for name, bundle, _ in glued}
    assert shown["ch0_calm"]["text/markdown"] == phrase  # the phrase the text pastes
    assert all(display is False for _, _, display in glued)
    assert records(glued)["ch0_calm"] == {
        "name": "ch0_calm", "kind": "chosen", "statement": phrase, "holds": condition,
        "values": {"translation": "il est calme ."}}


def test_values_become_json(glued):
    book.claim("ch0_vals", True, "s", nan=math.nan, inf=np.float64(math.inf), t=torch.tensor(2.5),
              none=None, flag=np.bool_(False), text="abc", seq=[1, 2])
    values = records(glued)["ch0_vals"]["values"]
    assert values == {"nan": "nan", "inf": "inf", "t": 2.5, "none": None, "flag": False,
                      "text": "abc", "seq": "[1, 2]"}


def test_outside_a_notebook_the_checks_still_run(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_myst_nb(name, *args, **kwargs):
        if name.startswith("myst_nb"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_myst_nb)
    book.claim("ch0_ok", True, "fine")
    assert book.choose("ch0_ph", False, "yes", "no") == "no"
    with pytest.raises(book.ClaimError):
        book.claim("ch0_bad", False, "false")


def test_glue_ratio_records_its_bounds(glued):
    book.glue_ratio("ch0_growth", 3.2, low=2, high=8)
    book.glue_ratio("ch0_above", 5.0, low=1)
    book.glue_ratio("ch0_free", 0.5)  # no bounds: no claim, only the number
    found = records(glued)
    assert found["ch0_growth"] == {"name": "ch0_growth", "kind": "guarded",
                                   "statement": "2 ≤ ch0_growth ≤ 8", "holds": True,
                                   "values": {"ch0_growth": 3.2}}
    assert found["ch0_above"]["statement"] == "1 ≤ ch0_above"
    assert "ch0_free" not in found
    assert [name for name, _, _ in glued if not name.startswith("claim__")] == [
        "ch0_growth", "ch0_above", "ch0_free"]
    with pytest.raises(book.ClaimError, match="outside"):
        book.glue_ratio("ch0_growth", 9.0, low=2, high=8)


def test_the_hidden_record_is_a_valid_notebook_output(glued):
    # myst-nb prefixes a hidden glue output's MIME types; nbformat then accepts a JSON object
    # only under a "+json" type (under plain application/json the cache refuses the notebook)
    import nbformat
    from myst_nb.ext.glue import GLUE_PREFIX
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    book.claim("ch0_valid", True, "a sentence", x=1.5)
    (name, bundle, _), = glued
    output = new_output("display_data", data={GLUE_PREFIX + k: v for k, v in bundle.items()},
                        metadata={"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}})
    nbformat.validate(new_notebook(cells=[new_code_cell("x", outputs=[output])]))


def test_the_report_extension_reads_what_claims_record(glued):
    from tools.build.book_sphinx import claims as report

    assert (report.CLAIM_PREFIX, report.CLAIM_MIME) == (claims.CLAIM_PREFIX, claims.CLAIM_MIME)
    book.claim("ch0_read", True, "a sentence", x=1.5)
    book.choose("ch0_pick", False, "yes", "no")
    glue = {name: {"data": bundle} for name, bundle, _ in glued}
    assert [r["name"] for r in report.claims_from_glue(glue)] == ["ch0_read", "ch0_pick"]
    with pytest.raises(ValueError, match="not a claim record"):
        report.claims_from_glue({"claim__bad": {"data": {claims.CLAIM_MIME: {"name": "bad"}}}})


def test_report_helpers_of_the_extension():
    from tools.build.book_sphinx import claims as report
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    assert report.plain_text("its *n* steps, **all** of $x_i$ in `f`; a*b") == \
        "its n steps, all of x_i in f; a*b"
    assert [report.format_value(v) for v in (0.123456, 12345, True, None, "x", math.inf)] == \
        ["0.1235", "12,345", "True", "None", "x", "inf"]
    text = report.TEXT["en"]
    assert report.status({"kind": "guarded", "holds": True}, text) == "✅ holds"
    assert report.status({"kind": "guarded", "holds": False}, text) == "❌ false"
    assert report.status({"kind": "chosen", "holds": False}, text) == text["chose_false"]
    assert set(report.TEXT["zh"]) == set(report.TEXT["en"])
    # sphinx-exercise gives every exercise (and solution) section the same id
    doc = new_document("<test>", get_default_settings(Parser))
    for ident in ("exercise-content", "solution-content", "exercise-content", "other"):
        doc += nodes.section(ids=[ident])
    report.unique_exercise_ids(None, doc, "page")
    assert [s["ids"] for s in doc.findall(nodes.section)] == [
        ["exercise-content-1"], ["solution-content-1"], ["exercise-content-2"], ["other"]]
