"""The claims on the execution report of the offline build, the API page, HTML ids, and one BLEU
convention per language pair wherever a score is reported.

The book is built once the nothing-at-all way (``built_book.build``); a guarded claim that a run
made false has already stopped that build (``book.ClaimError``), and ``book_sphinx.claims`` warns
(``-W``: fails) when a recorded guarded claim does not hold, so every row here must say so.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from built_book import HTML, LANGS, ROOT, build, notebooks, toc_files
from bs4 import BeautifulSoup

import d2lmini as d2l

HOLDS = {"zh": "✅ 成立", "en": "✅ holds"}
# a sacreBLEU signature: BLEU has tok: and smooth:, chrF has nc: and nw:
SIGNATURE_RE = re.compile(r"nrefs:[\w.]+\|case:\w+\|eff:\w+\|[a-z]+:[\w.-]+(?:\|[a-z]+:[\w.-]+)*"
                          r"\|version:[\d.]+")


@pytest.fixture(scope="module")
def book():
    build()
    return HTML


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def report_tables(page: BeautifulSoup) -> tuple[dict[str, list[str]], dict[str, list[list[str]]]]:
    """The claims report: {chapter page: [guarded, chosen, total]} from the count table, and
    {chapter page: rows of its claims table}."""
    counts = {}
    for tr in page.select("table.claims-count tbody tr"):
        cells = tr.find_all("td")
        href = cells[0].find("a")["href"].split("#")[0]
        counts[href[: -len(".html")]] = [c.get_text(strip=True) for c in cells[1:]]
    tables = {}
    for section in page.select("section.claims-chapter"):
        table = section.select_one("table.claims-table")
        rows = [[td.get_text(" ", strip=True) for td in tr.find_all("td")]
                for tr in table.select("tbody tr")] if table else []
        tables[section["id"][len("claims-"):]] = rows
    return counts, tables


@pytest.mark.book
@pytest.mark.parametrize("lang", LANGS)
def test_execution_report_lists_the_claims_of_every_chapter(book, lang):
    counts, tables = report_tables(soup(book / lang / "execution-report.html"))
    chapters = notebooks(lang)
    missing = [n for n in chapters if n not in counts or n not in tables]
    assert not missing, f"{lang}: chapters missing from the claims report: {missing}"
    for name in chapters:
        guarded, chosen, total = map(int, counts[name])
        assert guarded + chosen == total == len(tables[name]), f"{lang}/{name}: counts disagree"
    assert sum(int(c[2]) for c in counts.values()) > 0, f"{lang}: no claim recorded at all"


def named_in(claim: str, source: str) -> bool:
    """Is ``claim`` a string literal of ``source``, or made by one of its f-strings?"""
    if re.search(rf"['\"]{re.escape(claim)}['\"]", source):
        return True
    for _, body in re.findall(r"\bf(['\"])(\w*\{[^'\"]*)\1", source):
        pattern = "".join(".+" if part.startswith("{") else re.escape(part)
                          for part in re.split(r"(\{[^}]*\})", body))
        if re.fullmatch(pattern, claim):
            return True
    return False


@pytest.mark.book
@pytest.mark.parametrize("lang", LANGS)
def test_every_listed_claim_holds_and_is_in_the_source(book, lang):
    _, tables = report_tables(soup(book / lang / "execution-report.html"))
    problems = []
    for name, rows in tables.items():
        source = (ROOT / "book" / lang / f"{name}.md").read_text(encoding="utf-8")
        for claim, kind, statement, _values, status in rows:
            if kind in ("guarded", "断言检查") and status != HOLDS[lang]:
                problems.append(f"{name}: {claim} ({statement!r}): {status}")
            if not named_in(claim, source):
                problems.append(f"{name}: {claim} is not a name in the chapter's source")
    assert not problems, f"{lang}:\n" + "\n".join(problems)


@pytest.mark.book
@pytest.mark.parametrize("lang", LANGS)
def test_api_page_documents_every_module(book, lang):
    page = soup(book / lang / "api.html")
    ids = {e["id"] for e in page.find_all(id=True)}
    for module in (*d2l.MODULES, *d2l.book.MODULES):
        name = module.__name__.removeprefix("d2lmini.").replace(".", "-").replace("_", "-")
        assert f"module-{module.__name__}" in ids or f"sec-api-{name}" in ids, \
            f"{lang}/api.html: no section for {module.__name__}"
        documented = [n for n in module.__all__ if f"{module.__name__}.{n}" in ids]
        assert documented, f"{lang}/api.html: nothing of {module.__name__} documented"
    assert "d2lmini.metrics.corpus_bleu" in ids and "d2lmini.book.claims.claim" in ids


@pytest.mark.book
@pytest.mark.parametrize("lang", LANGS)
def test_no_page_repeats_an_html_id(book, lang):
    repeated = {}
    for name in toc_files():
        ids = Counter(e["id"] for e in soup(book / lang / f"{name}.html").find_all(id=True))
        twice = sorted(i for i, k in ids.items() if k > 1)
        if twice:
            repeated[name] = twice
    assert not repeated, f"{lang}: ids used more than once on a page: {repeated}"


# ---------------------------------------------------------------------------- BLEU conventions
def convention(signature: str) -> str:
    """A signature without ``nrefs`` (the number of references is the data's, not the
    convention's)."""
    return "|".join(f for f in signature.split("|") if not f.startswith("nrefs:"))


def declared() -> dict[str, set[str]]:
    """{pair: the conventions of its BLEU and chrF signatures}, from d2lmini's tables."""
    return {pair: {convention(d2l.corpus_bleu(["a b"], ["a b"], pair=pair).signature),
                   convention(d2l.corpus_chrf(["a b"], ["a b"], pair=pair).signature)}
            for pair in d2l.BLEU_CONVENTIONS}


def signatures_off_convention(texts: dict[str, str]) -> list[str]:
    """'where: signature' for each printed signature that is no pair's declared convention.

    Each pair has one BLEU and one chrF convention and every reported score passes ``pair=``,
    so a signature outside the declared ones is a score of some pair under another convention:
    two places reporting that pair would disagree."""
    allowed = set().union(*declared().values())
    return [f"{where}: {sig}" for where, text in texts.items()
            for sig in sorted(set(SIGNATURE_RE.findall(text))) if convention(sig) not in allowed]


def bench_signatures() -> dict[str, str]:
    """{'bench/results/<file>.json: <key>': signature} for every signature a result records."""
    found = {}

    def walk(obj, where):
        if isinstance(obj, dict):
            for key, value in obj.items():
                walk(value, f"{where}.{key}")
        elif isinstance(obj, list):
            for i, value in enumerate(obj):
                walk(value, f"{where}[{i}]")
        elif isinstance(obj, str) and SIGNATURE_RE.fullmatch(obj):
            found[where] = obj

    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")), path.relative_to(ROOT).as_posix())
    return found


def test_benchmark_results_use_the_declared_convention_of_their_pair():
    # time_to_bleu.json scores English-French (its 'bleu_pair', fra-eng when absent)
    problems = []
    for where, sig in bench_signatures().items():
        path = ROOT / where.split(".json")[0]
        data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        pair = data.get("bleu_pair", "fra-eng") if isinstance(data, dict) else "fra-eng"
        if convention(sig) not in declared()[pair]:
            problems.append(f"{where} ({pair}): {sig}")
    assert not problems, ("results scored under another convention than their pair's "
                          "(re-run the benchmark, or do not present them as the same "
                          "convention):\n" + "\n".join(problems))


@pytest.mark.book
@pytest.mark.parametrize("lang", LANGS)
def test_every_printed_signature_is_its_pairs_convention(book, lang):
    texts = {f"{lang}/{n}.html": soup(book / lang / f"{n}.html").get_text(" ")
             for n in toc_files()}
    bad = signatures_off_convention(texts)
    assert not bad, f"{lang}: scores printed under a convention no pair declares:\n" + \
        "\n".join(bad)


def test_the_signature_checks_can_fail():
    fra = d2l.corpus_bleu(["a b"], ["a b"], pair="fra-eng").signature
    other = d2l.corpus_bleu(["a b"], ["a b"], tokenize="13a").signature
    var = fra.replace("nrefs:1", "nrefs:var")
    text = f"BLEU 27.4 ({fra}); held out {var}; appendix ({other})"
    assert SIGNATURE_RE.findall(text) == [fra, var, other]
    assert signatures_off_convention({"page": text}) == [f"page: {other}"]
    chrf = d2l.corpus_chrf(["a"], ["a"], pair="cmn-eng").signature
    assert signatures_off_convention({"page": chrf}) == []
    assert named_in("ch0_a", 'book.claim("ch0_a", ok, "s")')
    assert named_in("ch0_x_3", 'book.claim(f"ch0_x_{k}", ok, "s")')
    assert not named_in("ch0_b", 'book.claim("ch0_a", ok, "s")')
