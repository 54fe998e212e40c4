"""Tests of tools/corpus: the bilingual grammar that generates the offline sentence pairs d2lmini
ships (d2lmini/corpora/*-offline.txt.gz, written by tools/corpus/write_offline_corpus.py).

The expectations below (French forms, Chinese measure words) are written out here, apart from
the grammar's own tables (tools/corpus/tables/*.tsv), so that a wrong entry in the
grammar makes a test fail.
"""

from __future__ import annotations

import collections
import copy
import gzip
import hashlib
import json
import random
import re

import pytest

from tools import corpus as offline
from tools.corpus import FRENCH_SPACE, generate_pairs
from tools.corpus import sampler as grammar
from tools.corpus import write_offline_corpus

import d2lmini as d2l

N = 20_000
PAIRS = ("fra-eng", "cmn-eng")


@pytest.fixture(scope="module")
def fra() -> list[tuple[str, str]]:
    return generate_pairs("fra-eng", N, seed=0)


@pytest.fixture(scope="module")
def cmn() -> list[tuple[str, str]]:
    return generate_pairs("cmn-eng", N, seed=0)


@pytest.fixture(scope="module")
def both(fra, cmn) -> dict[str, list[tuple[str, str]]]:
    return {"fra-eng": fra, "cmn-eng": cmn}


# ---------------------------------------------------------------------------------------------
# the function: export, count, types, determinism, errors
# ---------------------------------------------------------------------------------------------

def test_exported():
    assert offline.__all__ == ["generate_pairs", "corpus_text", "shipped_files", "write", "check"]
    assert offline.generate_pairs is grammar.generate_pairs
    # the generator is the project's tool, not the package's: d2lmini reads what it wrote
    assert not hasattr(d2l, "generate_pairs") and "generate_pairs" not in d2l.__all__
    assert offline.CORPORA == d2l.data.CORPORA


# ---------------------------------------------------------------------------------------------
# the shipped corpora are the grammar's
# ---------------------------------------------------------------------------------------------

def test_shipped_corpora_are_the_grammars():
    """d2lmini/corpora/ holds what the grammar writes now: the same text in each gzip file,
    the same offline.json (the written tool agrees, and says nothing differs)."""
    assert offline.check() == []
    assert write_offline_corpus.main(["--check"]) == 0
    manifest = json.loads((offline.CORPORA / "offline.json").read_text(encoding="utf-8"))
    for pair in PAIRS:
        text, num_written, num_generated = offline.corpus_text(pair)
        shipped = gzip.decompress((offline.CORPORA / manifest[pair]["file"]).read_bytes())
        assert shipped.decode("utf-8") == text == d2l.offline_corpus(pair).text
        assert (manifest[pair]["written"], manifest[pair]["generated"]) == (
            num_written, num_generated)
        assert hashlib.sha256(shipped).hexdigest() == manifest[pair]["sha256"]


def test_check_and_write_see_a_changed_corpus(tmp_path, capsys):
    """A shipped corpus that differs from the grammar's (or is missing) is named by check and by
    the tool's exit status; write makes the directory agree again."""
    assert offline.check(tmp_path) == [f"{pair}-offline.txt.gz (missing)" for pair in PAIRS] + [
        "offline.json (missing)"]
    written = offline.write(tmp_path)
    assert sorted(p.name for p in written) == sorted(offline.shipped_files())
    assert offline.check(tmp_path) == []
    (tmp_path / "fra-eng-offline.txt.gz").write_bytes(gzip.compress(b"Go.\tVa !\n"))
    assert offline.check(tmp_path) == ["fra-eng-offline.txt.gz"]
    (tmp_path / "offline.json").write_text("{}\n")
    assert offline.check(tmp_path) == ["fra-eng-offline.txt.gz", "offline.json"]


def test_a_damaged_shipped_corpus_is_refused(tmp_path, monkeypatch):
    offline.write(tmp_path)
    (tmp_path / "cmn-eng-offline.txt.gz").write_bytes(gzip.compress("Hi.\t嗨。\n".encode("utf-8")))
    monkeypatch.setattr(d2l.data, "CORPORA", tmp_path)
    d2l.data._shipped_corpus.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="cmn-eng: the offline corpus shipped with d2lmini "
                                               "is damaged"):
            d2l.offline_corpus("cmn-eng")
        assert d2l.offline_corpus("fra-eng").text == offline.corpus_text("fra-eng")[0]
    finally:
        d2l.data._shipped_corpus.cache_clear()


#: sha256 of ``generate_pairs(pair, 30_000, seed=0)`` written one ``en<TAB>translation`` line
#: per pair (what d2lmini.data merges with the written pairs; tests/library/test_data.py pins the
#: merged corpus). A change to the grammar or its tables that alters it must be deliberate.
GENERATED_SHA256 = {
    "fra-eng": "41536a2caee2df9201b3e87fb8e99972fd398270f176102e98ccaa2797cca408",
    "cmn-eng": "7f3c1baf41834328f3f09c2c7a146518d7d261544a14e8b5a31a0c56536a6b9f",
}


@pytest.mark.parametrize("pair", PAIRS)
def test_generated_pairs_are_pinned(pair):
    text = "".join(f"{en}\t{tgt}\n" for en, tgt in generate_pairs(pair, 30_000, seed=0))
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == GENERATED_SHA256[pair]


@pytest.mark.parametrize("pair", PAIRS)
def test_count_types_and_distinct(both, pair):
    pairs = both[pair]
    assert len(pairs) == N
    assert all(isinstance(p, tuple) and len(p) == 2 and all(isinstance(s, str) and s for s in p)
               for p in pairs)
    assert len({en for en, _ in pairs}) == N  # no English sentence twice


@pytest.mark.parametrize("pair", PAIRS)
def test_deterministic(pair):
    a = generate_pairs(pair, 300, seed=3)
    assert generate_pairs(pair, 300, seed=3) == a
    assert generate_pairs(pair, 300, seed=4) != a
    assert len(generate_pairs(pair, 1)) == 1


@pytest.mark.parametrize("pair", PAIRS)
def test_each_english_sentence_has_one_translation(both, pair):
    seen = dict(both[pair])
    for en, tgt in generate_pairs(pair, 5000, seed=1):
        assert seen.setdefault(en, tgt) == tgt


@pytest.mark.parametrize("pair", PAIRS)
def test_grammar_size(pair):
    g = grammar._grammar(pair)
    assert g.total >= 50_000
    assert g.capacity == g.total - len(g.excluded)


def test_errors():
    with pytest.raises(ValueError, match="name must be one of"):
        offline.corpus_text("text8")
    with pytest.raises(TypeError, match="pair must be a str"):
        generate_pairs(b"fra-eng", 10)
    with pytest.raises(ValueError, match=r"pair must be one of .*'fra-eng'.*'cmn-eng'.*deu-eng"):
        generate_pairs("deu-eng", 10)
    for bad in (0, -5):
        with pytest.raises(ValueError, match="num_pairs must be a positive int"):
            generate_pairs("fra-eng", bad)
    for bad in (2.0, "10", True, None):
        with pytest.raises(TypeError, match="num_pairs must be a positive int"):
            generate_pairs("fra-eng", bad)
    for bad in ("0", 1.5, False, None):
        with pytest.raises(TypeError, match="seed must be an int"):
            generate_pairs("cmn-eng", 10, seed=bad)
    for pair in PAIRS:
        cap = grammar._grammar(pair).capacity
        with pytest.raises(ValueError, match=f"at most {cap:,}.*distinct English sentences"):
            generate_pairs(pair, cap + 1)


def test_handwritten_sentences_are_left_out():
    """The hand-written corpus comes first offline; the grammar never repeats its English
    sentences, even when a pattern is used up entirely."""
    g = grammar._grammar("fra-eng")
    assert "He's calm." in g.excluded and "I'm home." in g.excluded
    template = next(t for t in g.templates if t.name == "be_adj")
    made = {en for en, _ in template}
    overlap = made & g.excluded
    assert overlap  # the pattern makes some of them (He's calm.)
    sub = copy.copy(g)
    sub.templates = [template]
    pairs = sub.sample(template.valid - len(overlap), random.Random(0))
    ens = {en for en, _ in pairs}
    assert len(ens) == len(pairs) == template.valid - len(overlap)
    assert ens == made - g.excluded
    for pair in PAIRS:
        assert not {en for en, _ in generate_pairs(pair, 3000)} & grammar._grammar(pair).excluded


# ---------------------------------------------------------------------------------------------
# shape of the sentences
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pair", PAIRS)
def test_english_shape(both, pair):
    for en, tgt in both[pair]:
        assert re.fullmatch(r"[A-Z][A-Za-z' ]*[A-Za-z][.?!]", en), en
        assert "  " not in en
        assert not re.search(r"\ban [^aeiou]|\ba [aeiou]", en), en  # a car, an apple
        end = {".": ".。", "?": "?？", "!": "!！"}[en[-1]]
        assert tgt[-1] in end, (en, tgt)


def test_french_typography(fra):
    for _en, fr in fra:
        assert fr[0].isupper(), fr
        if fr.endswith(("?", "!")):
            assert fr[-2] == FRENCH_SPACE and fr[-3] != " ", repr(fr)
        else:
            assert fr.endswith(".") and fr[-2] not in (" ", FRENCH_SPACE), repr(fr)
        body = fr[:-2] if fr[-2] == FRENCH_SPACE else fr[:-1]
        assert "?" not in body and "!" not in body and FRENCH_SPACE not in body, repr(fr)
        assert "  " not in fr and "' " not in fr and " '" not in fr, fr


def test_chinese_shape(cmn):
    cjk = re.compile(r"[\u4e00-\u9fff]+[。？！]")
    for en, zh in cmn:
        assert cjk.fullmatch(zh), (en, zh)
        assert (zh[-1] == "？") == zh.endswith("吗？") == en.endswith("?"), (en, zh)
    traditional = set("們個車書嗎這說見電話東麼還沒來會")
    assert not traditional & set("".join(zh for _, zh in cmn))


def test_english_contractions(fra):
    words = collections.Counter(w for en, _ in fra for w in en.rstrip(".?!").split())
    negations = {w.lower() for w in words if w.endswith("n't")}
    assert negations == {"isn't", "aren't", "don't", "doesn't", "didn't", "can't"}, negations
    assert {"I'm", "He's", "She's", "We're", "They're", "You're", "That's", "There's"} <= set(
        words)
    assert not {"I", "He", "She", "We", "They", "You"} & {
        en.split()[0] for en, _ in fra if re.match(r"\w+ (am|is|are) ", en)}  # I'm, not I am


@pytest.mark.parametrize("pair", PAIRS)
def test_no_object_repeats_its_subject(both, pair):
    """Tom is calling his mother (not Tom's mother); nobody is waiting for himself."""
    names = "Tom|John|Jack|Mary|Alice|Lucy"
    for en, _ in both[pair]:
        m = re.match(rf"(?:Is |Does |Did |Can )?({names}) ", en)
        if m:
            assert not re.search(rf"\b{m.group(1)}\b", en[m.end():]), en
        assert not re.fullmatch(r"(I|I'm|Do I|Did I) .*\bknow my \w+\.", en), en


@pytest.mark.parametrize("pair", PAIRS)
def test_lengths_like_the_short_end_of_tatoeba(both, pair):
    text = "\n".join(f"{en}\t{tgt}" for en, tgt in both[pair])
    if pair == "fra-eng":
        source, target = d2l.tokenize_nmt(d2l.preprocess_nmt(text))
    else:
        source, target = d2l.tokenize_cmn(d2l.preprocess_cmn(text))
    assert len(source) == len(target) == N
    assert all(3 <= len(s) <= 12 for s in source)
    assert all(t for t in target)
    lengths = collections.Counter(len(s) for s in source)
    assert len(lengths) >= 8  # short and long sentences, not one length


def test_preprocessing_accepts_the_output(fra):
    text = d2l.preprocess_nmt("\n".join(f"{en}\t{fr}" for en, fr in fra))
    assert FRENCH_SPACE not in text
    source, target = d2l.tokenize_nmt(text)
    assert all(s[-1] in ".?!" for s in source)
    assert all(t[-1] in ".?!" for t in target)  # punctuation is a token of its own
    vocab = d2l.Vocab(target, min_freq=2)
    assert len(vocab) > 300


# ---------------------------------------------------------------------------------------------
# French grammar
# ---------------------------------------------------------------------------------------------

# adjectives after être: masculine, feminine, masculine plural, feminine plural
FORMS = {
    "tired": "fatigué fatiguée fatigués fatiguées", "busy": "occupé occupée occupés occupées",
    "happy": "heureux heureuse heureux heureuses", "tall": "grand grande grands grandes",
    "short": "petit petite petits petites", "kind": "gentil gentille gentils gentilles",
    "lazy": "paresseux paresseuse paresseux paresseuses", "ready": "prêt prête prêts prêtes",
    "smart": "intelligent intelligente intelligents intelligentes",
    "old": "vieux vieille vieux vieilles", "sad": "triste triste tristes tristes",
}
SUBJECTS = {  # English pronoun or name: (feminine, plural)
    "He's": (False, False), "She's": (True, False), "He": (False, False), "She": (True, False),
    "They're": (False, True), "They": (False, True), "We're": (False, True),
    "You guys": (False, True), "Tom": (False, False), "John": (False, False),
    "Mary": (True, False), "Alice": (True, False), "Lucy": (True, False),
}
FEMININE = {"girl", "woman", "sister", "daughter", "mother", "wife"}
MASCULINE = {"boy", "man", "brother", "son", "friend", "father", "husband", "student", "child",
             "teacher", "neighbor", "boss"}
PLURALS = {"girls": "girl", "women": "woman", "sisters": "sister", "daughters": "daughter",
           "boys": "boy", "men": "man", "brothers": "brother", "sons": "son",
           "friends": "friend", "students": "student", "children": "child",
           "teachers": "teacher", "neighbors": "neighbor"}
SUBJECT = re.compile(r"(He's|She's|They're|We're|He|She|They|You guys|Tom|John|Mary|Alice|"
                     r"Lucy|(?:The|This|That|These|Those|My|Your|His|Her|Our|Their|\w+'s) "
                     r"(\w+))")


def gender_number(subject: str, noun: str | None) -> tuple[bool, bool] | None:
    """(feminine, plural) of an English subject, or None when the test does not know it."""
    if noun is None:
        return SUBJECTS[subject]
    plural = noun in PLURALS
    noun = PLURALS.get(noun, noun)
    if noun in FEMININE | MASCULINE:
        return noun in FEMININE, plural
    return None


def test_adjectives_agree_with_the_subject(fra):
    pattern = re.compile(SUBJECT.pattern + r"(?: is| are|n't| isn't| aren't)? (?:not )?"
                         r"(?:very )?(\w+)\.")
    checked = collections.Counter()
    for en, fr in fra:
        m = pattern.fullmatch(en)
        if not m or m.group(3) not in FORMS:
            continue
        gn = gender_number(m.group(1), m.group(2))
        if gn is None:
            continue
        fem, plural = gn
        forms = FORMS[m.group(3)].split()
        expected = forms[2 * plural + fem]
        words = set(re.findall(r"[\w']+", fr))
        assert expected in words, (en, fr, expected)
        assert not (set(forms) - {expected}) & words, (en, fr)
        checked[fem, plural] += 1
    assert len(checked) == 4 and min(checked.values()) >= 3, checked


def test_past_participles_agree_after_etre(fra):
    pattern = re.compile(SUBJECT.pattern + r" (?:went|didn't go|came|didn't come)\b.*")
    checked = collections.Counter()
    for en, fr in fra:
        m = pattern.fullmatch(en)
        if not m or gender_number(m.group(1), m.group(2)) is None:
            continue
        fem, plural = gender_number(m.group(1), m.group(2))
        ending = {(False, False): "", (True, False): "e", (False, True): "s",
                  (True, True): "es"}[fem, plural]
        participle = re.search(r"\b(allé|rentré|venu)(e?s?)\b", fr)
        assert participle and participle.group(2) == ending, (en, fr)
        checked[fem, plural] += 1
    assert len(checked) == 4, checked


def test_elision_and_contraction(fra):
    vowel = "aeiouyàâéèêëîïôûœh"
    for _en, fr in fra:
        low = fr.lower()
        # j'ai, n'est (but est-ce un: no elision after a hyphen)
        assert not re.search(rf"(?<![\w-])(je|ne|le|la|de|que|ce) [{vowel}]", low), fr
        assert not re.search(r"\b(de|à) (le|les)\b", low), fr  # du, au, des, aux
        assert not re.search(rf"\b[mts]a [{vowel}]", low), fr  # mon amie, son école
        assert not re.search(rf"(?<![\w-])ce [{vowel}]", low), fr  # cet homme
        assert not re.search(rf"\b(beau|vieux|nouveau) [{vowel}]\w*[^s] ", low + " "), fr
        assert set(re.findall(r"\bc'(\w+)", low)) <= {"est"}, fr  # c'est, not c'homme
    words = collections.Counter(w for _, fr in fra for w in re.findall(r"\w+'", fr.lower()))
    assert {"j'", "n'", "l'", "d'", "c'", "qu'"} <= set(words), words


def test_de_after_negation(fra):
    """un, une, des, du, de la become de after a negated verb, but not after être and not in
    jouer du piano (a preposition, not a partitive)."""
    checked = 0
    for en, fr in fra:
        for m in re.finditer(r"(\S+) pas (un|une|des|du|de la|de l')\b", fr):
            assert m.group(1) in ("n'est", "sont") or m.group(1).startswith("jou"), fr
        if re.fullmatch(r"\w+ (doesn't|don't) (have|eat|drink) (a|an)? ?\w+\.", en):
            assert re.search(r"\bpas (de |d')", fr), (en, fr)
            checked += 1
    assert checked >= 20


def test_inversion(fra):
    for en, fr in fra:
        assert not re.search(r"[aeé]-(il|elle)\b", fr, re.IGNORECASE), fr  # a-t-il, aime-t-elle
        assert not re.search(r"[^ae]-t-(il|elle)\b", fr, re.IGNORECASE), fr
        if en.endswith("?") and re.match(r"(Are|Is|Do|Does|Did|Can) (you|he|she|they)\b", en):
            assert re.match(r"\S+-(t-)?(tu|il|elle|ils|vous)\b", fr), (en, fr)


# ---------------------------------------------------------------------------------------------
# Chinese grammar
# ---------------------------------------------------------------------------------------------

MEASURE = {"car": "辆", "book": "本", "cat": "只", "dog": "只", "horse": "匹", "house": "栋",
           "phone": "部", "computer": "台", "watch": "块", "umbrella": "把", "pen": "支",
           "bike": "辆", "bird": "只", "bag": "个", "hat": "顶", "wallet": "个", "jacket": "件"}
NOUN_ZH = {"car": "车", "book": "书", "cat": "猫", "dog": "狗", "horse": "马", "house": "房子",
           "phone": "手机", "computer": "电脑", "watch": "手表", "umbrella": "伞", "pen": "笔",
           "bike": "自行车", "bird": "鸟", "bag": "包", "hat": "帽子", "wallet": "钱包",
           "jacket": "夹克"}
NUMBER_ZH = {"a": "一", "an": "一", "two": "两", "three": "三"}


def test_measure_words(cmn):
    pattern = re.compile(r"\w+ (?:has|have|wants?) (a|an|two|three) (\w+?)s?\.")
    demonstrative = re.compile(r"(This|That) (\w+) (?:is|isn't) \w+\.")
    checked = 0
    for en, zh in cmn:
        m = pattern.fullmatch(en)
        if m and m.group(2) in MEASURE:
            noun = m.group(2)
            assert NUMBER_ZH[m.group(1)] + MEASURE[noun] + NOUN_ZH[noun] + "。" in zh, (en, zh)
            checked += 1
        m = demonstrative.fullmatch(en)
        if m and m.group(2) in MEASURE:
            noun = m.group(2)
            start = {"This": "这", "That": "那"}[m.group(1)] + MEASURE[noun] + NOUN_ZH[noun]
            assert zh.startswith(start), (en, zh)
            checked += 1
    assert checked >= 50
    for _, zh in cmn:
        assert not re.search(r"二[个只本辆张把件杯台部块顶封份支盏朵根匹栋扇位]", zh), zh  # 两
        assert "不有" not in zh, zh  # 没有


def test_chinese_negation_and_questions(cmn):
    for en, zh in cmn:
        if zh.endswith("吗？"):
            assert "很" not in zh and "非常" not in zh, (en, zh)  # 你累吗？ not 你很累吗？
        if "没" in zh:
            assert "了" not in zh[zh.index("没"):], (en, zh)  # 我没吃, not 我没吃了
        if re.fullmatch(r"\w+ (doesn't|don't) have .*", en):
            assert "没有" in zh and "一" not in zh, (en, zh)  # 我没有车


CORRESPONDENCES = [  # English pattern, what the Chinese must contain (a regex)
    (r"\w+ (isn't|aren't|'m not) (at|in) [^.]*\.", "不在"),
    (r"\w+ can't .*", "不会"),
    (r"Can \w+ .*", "会.*吗？"),
    (r"Don't .*", "^别"),
    (r"Please .*", "^请"),
    (r"There isn't .*", "没有"),
    (r"There's an? .*", "有一"),
    (r"\w+ didn't .*", "没"),
    (r"\w+ (bought|ate|drank|wrote|saw|found|sold|lost|opened|made) (a|an|two|three) .*",
     "了[一两三]"),
    (r"\w+('s| is|'re| are) (eating|drinking|reading|watching|calling|waiting) .*", "在"),
    (r"Is (this|that) (an?|your|his|her|their|\w+'s) (\w+ )?\w+\?", "^[这那]是.*吗？"),
]


def test_chinese_correspondences(cmn):
    checked = collections.Counter()
    for en, zh in cmn:
        for pattern, needed in CORRESPONDENCES:
            if re.fullmatch(pattern, en):
                assert re.search(needed, zh), (en, zh, needed)
                checked[pattern] += 1
        if en.startswith(("There isn't", "There's no")):
            assert "一" not in zh, (en, zh)  # 桌子上没有书
        if re.search(r"\b(didn't|doesn't|don't|isn't|aren't|can't|'m not)\b", en):
            assert re.search("[不没别]", zh), (en, zh)
    assert len(checked) == len(CORRESPONDENCES), checked


def test_chinese_time_words_follow_the_subject(cmn):
    times = {"today": "今天", "tomorrow": "明天", "now": "现在", "yesterday": "昨天"}
    checked = 0
    for en, zh in cmn:
        word = en.rstrip(".?!").split()[-1]
        if word in times and not en.startswith("It"):
            t = times[word]
            assert zh.count(t) == 1, (en, zh)
            rest = zh[zh.index(t) + 2:]
            assert len(rest) >= 2 and rest[0] not in "。？吗", (en, zh)  # a predicate follows
            checked += 1
    assert checked >= 100


# ---------------------------------------------------------------------------------------------
# held-out sentences are new combinations of known words
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pair", PAIRS)
def test_held_out_words_are_known(both, pair):
    text = "\n".join(f"{en}\t{tgt}" for en, tgt in both[pair])
    if pair == "fra-eng":
        source, target = d2l.tokenize_nmt(d2l.preprocess_nmt(text))
    else:
        source, target = d2l.tokenize_cmn(d2l.preprocess_cmn(text))
    train_src, train_tgt, test_src, test_tgt = d2l.split_nmt(source, target, 0.1, seed=0)
    counts = collections.Counter(w for s in train_src for w in s)
    unknown = {w for s in test_src for w in s if counts[w] < 2}
    assert not unknown, unknown
    assert not {tuple(s) for s in test_src} & {tuple(s) for s in train_src}
    if pair == "cmn-eng":  # every held-out character was seen in training, too
        chars = collections.Counter(c for t in train_tgt for c in t)
        assert not {c for t in test_tgt for c in t if chars[c] < 2}
