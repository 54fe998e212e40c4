"""Generated sentence pairs: a small bilingual grammar of English–French and English–Chinese.

The translation chapters train on Tatoeba pairs. A reader without the data gets corpora written
by this project instead; the hand-written files in ``d2lmini/corpora/`` hold a few hundred pairs,
too few to train a model on thousands of pairs and to test it on held-out sentences it has never
seen. :func:`generate_pairs` makes as many pairs as needed from a grammar written here: a lexicon
of a few hundred words per language and some thirty sentence patterns (be + adjective, place,
profession or age; have, like, want, eat and drink; progressive, past and near-future verbs;
go, come, live, work, speak, study, play, can; know, wait for, there is, this is, weather,
imperatives, exclamations), each in the affirmative, the negative and as a yes/no question.

Every English sentence has exactly one translation, built by the grammar of the target
language rather than word by word: French agreement of adjectives and past participles in
gender and number, elision (``j'aime``, ``l'homme``, ``n'est``), contraction (``au``, ``du``),
``de`` after negation, inversion with ``-t-``, ``mon`` before a vowel, ``cet``, ``bel``;
Chinese measure words (一本书, 两只猫), 很 + adjective, 不/没 negation, 了, 吗, 在 + place and
time words after the subject. The language is closed and regular, so a model can learn it from
a few thousand pairs, and a held-out sentence is a new combination of known words.

Sentences look like Tatoeba's: capitalised, punctuation attached, French with a narrow
no-break space (U+202F) before ``?`` and ``!``, Chinese with full-width ``。？！``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any

__all__ = ["generate_pairs"]

#: The language pairs the grammar speaks (English first, as in Tatoeba's files).
PAIRS = ("fra-eng", "cmn-eng")

#: The space French typography puts before ``?`` and ``!`` (as many lines of ``fra.txt`` do;
#: :func:`d2lmini.preprocess_nmt` turns it into an ordinary space).
FRENCH_SPACE = "\u202f"

_FRA = PAIRS[0]
_HANDWRITTEN = {"fra-eng": "fra-eng-mini.txt", "cmn-eng": "cmn-eng-mini.txt"}


# ---------------------------------------------------------------------------------------------
# spelling
# ---------------------------------------------------------------------------------------------

_FR_VOWELS = frozenset("aeiouyàâäéèêëîïôöûüœæ")
# words with a mute h: they elide like vowels (l'homme, l'hôpital, j'habite)
_H_MUET = ("homme", "hôpital", "hôtel", "histoire", "habit")
_CONTRACT = {("à", "le"): "au", ("à", "les"): "aux", ("de", "le"): "du", ("de", "les"): "des"}


def _fr_vowel(word: str) -> bool:
    """Does ``word`` begin with a vowel sound for elision (a vowel or a mute h)?"""
    c = word[:1].lower()
    return c in _FR_VOWELS or (c == "h" and word.lower().startswith(_H_MUET))


_VOWEL = "[aeiouyàâäéèêëîïôöûüœæAEIOUYÀÂÉÈÊÎÔŒ]|[hH](?:" + "|".join(h[1:] for h in _H_MUET) + ")"
_CONTRACT_RE = re.compile(rf"(?<![\w'-])(à|de) (les|le(?! (?:{_VOWEL})))(?= )")
_ELIDE_RE = re.compile(rf"(?<![\w'-])(je|ne|le|la|de|que|ce) (?={_VOWEL})")


def _fr_join(tokens: Sequence[str]) -> str:
    """Join French words: ``à le``/``de le`` contract before a consonant (au, du; aux, des), and
    je, ne, le, la, de, que, ce elide before a vowel (j'ai, l'école, n'est, c'est)."""
    text = " ".join(t for t in tokens if t)
    text = _CONTRACT_RE.sub(lambda m: _CONTRACT[m.group(1), m.group(2)], text)
    return _ELIDE_RE.sub(lambda m: m.group(1)[:-1] + "'", text)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


_EN_END = {"+": ".", "-": ".", "?": "?", "!": "!"}
_FR_END = {"+": ".", "-": ".", "?": FRENCH_SPACE + "?", "!": FRENCH_SPACE + "!"}
_ZH_END = {"+": "。", "-": "。", "?": "？", "!": "！"}


def _en_out(words: Sequence[str], mood: str) -> str:
    return _cap(" ".join(" ".join(words).split())) + _EN_END[mood]


def _fr_out(tokens: Sequence[str], mood: str) -> str:
    return _cap(_fr_join(tokens)) + _FR_END[mood]


def _zh_out(text: str, mood: str) -> str:
    return text + _ZH_END[mood]


def _a_an(phrase: str) -> str:
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase


# ---------------------------------------------------------------------------------------------
# lexicon
# ---------------------------------------------------------------------------------------------

def _rows(table: str) -> list[list[str]]:
    """Parse a ``|``-separated table (``#`` starts a comment line; ``-`` is an empty cell)."""
    rows = []
    for line in table.strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rows.append(["" if c.strip() == "-" else c.strip() for c in line.split("|")])
    return rows


class _Noun:
    """A noun: English singular/plural, French singular/plural and gender, Chinese word and
    measure word, and tags: its kind (person, animal, thing, food, drink); ``mass`` (du/de la,
    no plural); for people ``kin`` (我妈妈 without 的) or ``role`` (my teacher) or ``plain``
    (this man), ``pl`` (used in the plural), ``child`` (I have a son), ``spouse`` (my wife, not
    our wife), ``fra`` (French only: brother and sister have no neutral Chinese word);
    ``personal`` things are not owned by "we" or "they" (our car, not our jacket)."""

    __slots__ = ("cl", "en", "en_pl", "fr", "fr_pl", "g", "key", "kin", "mass", "tags", "zh")

    def __init__(self, key, en, en_pl, fr, fr_pl, g, zh, cl, tags):
        self.key, self.en, self.en_pl, self.fr, self.fr_pl = key, en, en_pl, fr, fr_pl
        self.g, self.zh, self.cl = g, zh, cl
        self.tags = frozenset(tags.split())
        self.mass = "mass" in self.tags
        self.kin = "kin" in self.tags


_NOUNS_TABLE = """
# en         | en_pl      | fr           | fr_pl         | g | zh     | cl | tags
friend       | friends    | ami          | amis          | m | 朋友   | 个 | person kin pl
mother       | mothers    | mère         | mères         | f | 妈妈   | 个 | person kin
father       | fathers    | père         | pères         | m | 爸爸   | 个 | person kin
son          | sons       | fils         | fils          | m | 儿子   | 个 | person kin pl child
daughter     | daughters  | fille        | filles        | f | 女儿   | 个 | person kin pl child
brother      | brothers   | frère        | frères        | m | -      | -  | person kin pl child fra
sister       | sisters    | sœur         | sœurs         | f | -      | -  | person kin pl child fra
wife         | wives      | femme        | femmes        | f | 妻子   | 个 | person kin spouse
husband      | husbands   | mari         | maris         | m | 丈夫   | 个 | person kin spouse
teacher      | teachers   | professeur   | professeurs   | m | 老师   | 位 | person role pl
neighbor     | neighbors  | voisin       | voisins       | m | 邻居   | 个 | person role pl
boss         | bosses     | patron       | patrons       | m | 老板   | 个 | person role
boy          | boys       | garçon       | garçons       | m | 男孩   | 个 | person plain pl
girl         | girls      | fille        | filles        | f | 女孩   | 个 | person plain pl
man          | men        | homme        | hommes        | m | 男人   | 个 | person plain pl
woman        | women      | femme        | femmes        | f | 女人   | 个 | person plain pl
child        | children   | enfant       | enfants       | m | 孩子   | 个 | person plain pl
student      | students   | étudiant     | étudiants     | m | 学生   | 个 | person plain pl
dog          | dogs       | chien        | chiens        | m | 狗     | 只 | animal
cat          | cats       | chat         | chats         | m | 猫     | 只 | animal
bird         | birds      | oiseau       | oiseaux       | m | 鸟     | 只 | animal
horse        | horses     | cheval       | chevaux       | m | 马     | 匹 | animal
rabbit       | rabbits    | lapin        | lapins        | m | 兔子   | 只 | animal
mouse        | mice       | souris       | souris        | f | 老鼠   | 只 | animal
duck         | ducks      | canard       | canards       | m | 鸭子   | 只 | animal
car          | cars       | voiture      | voitures      | f | 车     | 辆 | thing
bike         | bikes      | vélo         | vélos         | m | 自行车 | 辆 | thing
house        | houses     | maison       | maisons       | f | 房子   | 栋 | thing
room         | rooms      | chambre      | chambres      | f | 房间   | 个 | thing
book         | books      | livre        | livres        | m | 书     | 本 | thing
bag          | bags       | sac          | sacs          | m | 包     | 个 | thing personal
phone        | phones     | téléphone    | téléphones    | m | 手机   | 部 | thing personal
computer     | computers  | ordinateur   | ordinateurs   | m | 电脑   | 台 | thing
watch        | watches    | montre       | montres       | f | 手表   | 块 | thing personal
umbrella     | umbrellas  | parapluie    | parapluies    | m | 伞     | 把 | thing personal
key          | keys       | clé          | clés          | f | 钥匙   | 把 | thing personal
hat          | hats       | chapeau      | chapeaux      | m | 帽子   | 顶 | thing personal
table        | tables     | table        | tables        | f | 桌子   | 张 | thing
chair        | chairs     | chaise       | chaises       | f | 椅子   | 把 | thing
box          | boxes      | boîte        | boîtes        | f | 盒子   | 个 | thing
cup          | cups       | tasse        | tasses        | f | 杯子   | 个 | thing
letter       | letters    | lettre       | lettres       | f | 信     | 封 | thing personal
newspaper    | newspapers | journal      | journaux      | m | 报纸   | 份 | thing
pen          | pens       | stylo        | stylos        | m | 笔     | 支 | thing personal
lamp         | lamps      | lampe        | lampes        | f | 灯     | 盏 | thing
bed          | beds       | lit          | lits          | m | 床     | 张 | thing
shirt        | shirts     | chemise      | chemises      | f | 衬衫   | 件 | thing personal
jacket       | jackets    | veste        | vestes        | f | 夹克   | 件 | thing personal
photo        | photos     | photo        | photos        | f | 照片   | 张 | thing
flower       | flowers    | fleur        | fleurs        | f | 花     | 朵 | thing
wallet       | wallets    | portefeuille | portefeuilles | m | 钱包   | 个 | thing personal
taxi         | taxis      | taxi         | taxis         | m | 出租车 | 辆 | thing
movie        | movies     | film         | films         | m | 电影   | 部 | thing
apple        | apples     | pomme        | pommes        | f | 苹果   | 个 | food personal
orange       | oranges    | orange       | oranges       | f | 橙子   | 个 | food personal
egg          | eggs       | œuf          | œufs          | m | 鸡蛋   | 个 | food personal
cake         | cakes      | gâteau       | gâteaux       | m | 蛋糕   | 个 | food personal
banana       | bananas    | banane       | bananes       | f | 香蕉   | 根 | food personal
sandwich     | sandwiches | sandwich     | sandwichs     | m | 三明治 | 个 | food personal
pear         | pears      | poire        | poires        | f | 梨     | 个 | food personal
tomato       | tomatoes   | tomate       | tomates       | f | 西红柿 | 个 | food personal
carrot       | carrots    | carotte      | carottes      | f | 胡萝卜 | 根 | food personal
bread        | -          | pain         | -             | m | 面包   | -  | food mass
rice         | -          | riz          | -             | m | 米饭   | -  | food mass
meat         | -          | viande       | -             | f | 肉     | -  | food mass
fish         | -          | poisson      | -             | m | 鱼     | -  | food mass
cheese       | -          | fromage      | -             | m | 奶酪   | -  | food mass
chicken      | -          | poulet       | -             | m | 鸡肉   | -  | food mass
chocolate    | -          | chocolat     | -             | m | 巧克力 | -  | food mass
soup         | -          | soupe        | -             | f | 汤     | -  | food mass
tea          | -          | thé          | -             | m | 茶     | 杯 | drink mass
coffee       | -          | café         | -             | m | 咖啡   | 杯 | drink mass
milk         | -          | lait         | -             | m | 牛奶   | 杯 | drink mass
water        | -          | eau          | -             | f | 水     | 杯 | drink mass
orange juice | -          | jus d'orange | -             | m | 橙汁   | 杯 | drink mass
beer         | -          | bière        | -             | f | 啤酒   | 杯 | drink mass
wine         | -          | vin          | -             | m | 葡萄酒 | 杯 | drink mass
music        | -          | musique      | -             | f | 音乐   | -  | mass
"""

_N = {r[0].split()[-1]: _Noun(r[0].split()[-1], *r) for r in _rows(_NOUNS_TABLE)}


def _nouns(keys: str) -> list[_Noun]:
    return [_N[k] for k in keys.split()]


class _Name:
    __slots__ = ("en", "fr", "g", "zh")

    def __init__(self, en, zh, g):
        self.en = self.fr = en
        self.zh, self.g = zh, g


_NAMES = [_Name("Tom", "汤姆", "m"), _Name("John", "约翰", "m"), _Name("Jack", "杰克", "m"),
          _Name("Mary", "玛丽", "f"), _Name("Alice", "爱丽丝", "f"), _Name("Lucy", "露西", "f")]


class _Pron:
    """A personal pronoun subject and the possessives that go with it."""

    __slots__ = ("be", "contr", "en", "fr", "g", "key", "own_en", "own_fr", "p", "pl", "zh")

    def __init__(self, key, en, contr, be, fr, p, g, pl, zh, own_en, own_fr):
        self.key, self.en, self.contr, self.be, self.fr, self.p = key, en, contr, be, fr, p
        self.g, self.pl, self.zh, self.own_en = g, pl, zh, own_en
        self.own_fr = tuple(own_fr.split())  # masculine, feminine, plural


_PRONS = {p.key: p for p in [
    _Pron("I", "I", "I'm", "am", "je", 0, "m", False, "我", "my", "mon ma mes"),
    _Pron("you", "you", "you're", "are", "tu", 1, "m", False, "你", "your", "ton ta tes"),
    _Pron("he", "he", "he's", "is", "il", 2, "m", False, "他", "his", "son sa ses"),
    _Pron("she", "she", "she's", "is", "elle", 2, "f", False, "她", "her", "son sa ses"),
    _Pron("we", "we", "we're", "are", "nous", 3, "m", True, "我们", "our", "notre notre nos"),
    _Pron("youpl", "you guys", "", "are", "vous", 4, "m", True, "你们", "your",
          "votre votre vos"),
    _Pron("they", "they", "they're", "are", "ils", 5, "m", True, "他们", "their",
          "leur leur leurs"),
]}
_OWNERS = ("I", "you", "he", "she", "we", "they")  # possessors of noun phrases ("your" = ton)

_NUM_EN = {2: "two", 3: "three", 4: "four", 5: "five"}
_NUM_FR = {2: "deux", 3: "trois", 4: "quatre", 5: "cinq"}
_NUM_ZH = {2: "两", 3: "三", 4: "四", 5: "五"}

_TIMES = {  # English, French, Chinese (after the subject)
    "today": ("today", "aujourd'hui", "今天"),
    "now": ("now", "maintenant", "现在"),
    "tomorrow": ("tomorrow", "demain", "明天"),
    "yesterday": ("yesterday", "hier", "昨天"),
}


def _t_en(time: str | None) -> str:
    return _TIMES[time][0] if time else ""


def _t_fr(time: str | None) -> str:
    return _TIMES[time][1] if time else ""


def _t_zh(time: str | None) -> str:
    return _TIMES[time][2] if time else ""


class _Verb:
    """English forms (base, 3rd person singular, -ing, past, and a particle such as "for"),
    French present (je … ils), past participle and auxiliary, and the Chinese verb."""

    __slots__ = ("en", "etre", "imp", "inf", "ing", "past", "pp", "prep", "pres", "s3", "zh")

    def __init__(self, en, fr, zh):
        parts = en.split()
        self.en, self.s3, self.ing, self.past = parts[:4]
        self.prep = " ".join(parts[4:])
        inf, *rest = fr.split()
        self.inf = inf
        if len(rest) >= 7:
            self.pres, self.pp = rest[:6], rest[6]
        else:  # a regular -er verb: the participle follows, then optional "être"
            stem = inf[:-2]
            nous = stem + ("eons" if stem.endswith("g") else "ons")
            self.pres = [stem + "e", stem + "es", stem + "e", nous, stem + "ez", stem + "ent"]
            self.pp = stem + "é"
        self.etre = fr.endswith(" être")
        self.zh = zh
        tu = self.pres[1]
        self.imp = tu[:-1] if tu.endswith(("es", "as")) else tu  # mange, va, bois, ouvre


def _v(en: str, fr: str, zh: str = "") -> _Verb:
    return _Verb(en, fr, zh)


_V = {
    "be": _v("be is being was", "être suis es est sommes êtes sont été"),
    "have": _v("have has having had", "avoir ai as a avons avez ont eu", "有"),
    "go": _v("go goes going went", "aller vais vas va allons allez vont allé être", "去"),
    "gohome": _v("go goes going went", "rentrer être", "回家"),
    "come": _v("come comes coming came",
               "venir viens viens vient venons venez viennent venu être", "来"),
    "like": _v("like likes liking liked", "aimer", "喜欢"),
    "hate": _v("hate hates hating hated", "détester", "讨厌"),
    "want": _v("want wants wanting wanted", "vouloir veux veux veut voulons voulez veulent "
               "voulu", "想要"),
    "can": _v("can can - -", "savoir sais sais sait savons savez savent su", "会"),
    "eat": _v("eat eats eating ate", "manger", "吃"),
    "drink": _v("drink drinks drinking drank", "boire bois bois boit buvons buvez boivent bu",
                "喝"),
    "buy": _v("buy buys buying bought", "acheter achète achètes achète achetons achetez "
              "achètent acheté", "买"),
    "sell": _v("sell sells selling sold", "vendre vends vends vend vendons vendez vendent "
               "vendu", "卖"),
    "read": _v("read reads reading read", "lire lis lis lit lisons lisez lisent lu", "看"),
    "write": _v("write writes writing wrote", "écrire écris écris écrit écrivons écrivez "
                "écrivent écrit", "写"),
    "see": _v("see sees seeing saw", "voir vois vois voit voyons voyez voient vu", "看见"),
    "find": _v("find finds finding found", "trouver", "找到"),
    "lose": _v("lose loses losing lost", "perdre perds perds perd perdons perdez perdent "
               "perdu", "丢"),
    "wash": _v("wash washes washing washed", "laver", "洗"),
    "open": _v("open opens opening opened", "ouvrir ouvre ouvres ouvre ouvrons ouvrez ouvrent "
               "ouvert", "打开"),
    "close": _v("close closes closing closed", "fermer", "关上"),
    "clean": _v("clean cleans cleaning cleaned", "nettoyer nettoie nettoies nettoie nettoyons "
                "nettoyez nettoient nettoyé", "打扫"),
    "make": _v("make makes making made", "préparer", "做"),
    "call": _v("call calls calling called", "appeler appelle appelles appelle appelons "
               "appelez appellent appelé", "打电话"),
    "help": _v("help helps helping helped", "aider", "帮"),
    "watch": _v("watch watches watching watched", "regarder", "看"),
    "listen": _v("listen listens listening listened to", "écouter", "听"),
    "look": _v("look looks looking looked for", "chercher", "找"),
    "wait": _v("wait waits waiting waited for", "attendre attends attends attend attendons "
               "attendez attendent attendu", "等"),
    "know": _v("know knows knowing knew", "connaître connais connais connaît connaissons "
               "connaissez connaissent connu", "认识"),
    "live": _v("live lives living lived", "habiter", "住"),
    "work": _v("work works working worked", "travailler", "工作"),
    "speak": _v("speak speaks speaking spoke", "parler", "说"),
    "study": _v("study studies studying studied", "étudier", "学习"),
    "play": _v("play plays playing played", "jouer"),
    "learn": _v("learn learns learning learned", "apprendre apprends apprends apprend "
                "apprenons apprenez apprennent appris", "学"),
    "take": _v("take takes taking took", "prendre prends prends prend prenons prenez prennent "
               "pris", "坐"),
    "meet": _v("see sees seeing saw", "voir vois vois voit voyons voyez voient vu", "见"),
}


# ---------------------------------------------------------------------------------------------
# adjectives
# ---------------------------------------------------------------------------------------------

class _Adj:
    """An adjective: French forms (masculine, feminine, masculine plural, feminine plural and
    the masculine singular before a vowel: bel, vieil, nouvel) and position (``pre``/``post``);
    Chinese attributive form and predicative forms for a statement, a negation and a
    question (before 吗); ``very`` when it takes "very"/très/非常 (Chinese 很 → 非常)."""

    __slots__ = (
        "avoir",
        "en",
        "fr",
        "key",
        "nouns",
        "pos",
        "times",
        "very",
        "zh_attr",
        "zh_neg",
        "zh_pos",
        "zh_q",
    )

    def __init__(self, key, en, fr, pos="post", zh_attr="", zh_pos="", zh_neg="", zh_q="",
                 avoir=False, very=False, times="", nouns=""):
        self.key, self.en = key, en
        forms = [f.replace("_", " ") for f in fr.split()]
        if len(forms) == 1:
            forms = forms * 4
        elif len(forms) == 2:  # calme calmes
            forms = [forms[0], forms[0], forms[1], forms[1]]
        if len(forms) == 4:
            forms.append(forms[0])
        self.fr = forms
        self.pos, self.zh_attr, self.zh_pos, self.zh_neg, self.zh_q = pos, zh_attr, zh_pos, \
            zh_neg, zh_q
        self.avoir, self.very = avoir, very
        self.times = tuple(times.split())
        self.nouns = frozenset(nouns.split())

    def agree(self, g: str, pl: bool, before_vowel: bool = False) -> str:
        if pl:
            return self.fr[2 if g == "m" else 3]
        if g == "m":
            return self.fr[4] if before_vowel else self.fr[0]
        return self.fr[1]

    def zh_very(self) -> str:
        return "非常" + self.zh_pos[1:]


def _pa(key, en, fr, zh_pos, zh_neg, zh_q, very=True, times="", avoir=False):
    return _Adj(key, en, fr, zh_pos=zh_pos, zh_neg=zh_neg, zh_q=zh_q, very=very, times=times,
                avoir=avoir)


#: Adjectives said of people (he's tired; I'm hungry = j'ai faim, 我饿了).
_PERSON_ADJ = [
    _pa("tired", "tired", "fatigué fatiguée fatigués fatiguées", "很累", "不累", "累",
        times="today now"),
    _pa("busy", "busy", "occupé occupée occupés occupées", "很忙", "不忙", "忙",
        times="today now tomorrow"),
    _pa("happy", "happy", "heureux heureuse heureux heureuses", "很高兴", "不高兴", "高兴",
        times="today"),
    _pa("sad", "sad", "triste tristes", "很难过", "不难过", "难过", times="today"),
    _pa("tall", "tall", "grand grande grands grandes", "很高", "不高", "高"),
    _pa("short", "short", "petit petite petits petites", "很矮", "不矮", "矮"),
    _pa("strong", "strong", "fort forte forts fortes", "很强壮", "不强壮", "强壮"),
    _pa("young", "young", "jeune jeunes", "很年轻", "不年轻", "年轻"),
    _pa("rich", "rich", "riche riches", "很富有", "不富有", "富有"),
    _pa("poor", "poor", "pauvre pauvres", "很穷", "不穷", "穷"),
    _pa("smart", "smart", "intelligent intelligente intelligents intelligentes", "很聪明",
        "不聪明", "聪明"),
    _pa("lazy", "lazy", "paresseux paresseuse paresseux paresseuses", "很懒", "不懒", "懒"),
    _pa("kind", "kind", "gentil gentille gentils gentilles", "很善良", "不善良", "善良"),
    _pa("shy", "shy", "timide timides", "很害羞", "不害羞", "害羞"),
    _pa("calm", "calm", "calme calmes", "很冷静", "不冷静", "冷静"),
    _pa("thin", "thin", "mince minces", "很瘦", "不瘦", "瘦"),
    _pa("angry", "angry", "en_colère", "很生气", "没生气", "生气了", times="now"),
    _pa("old", "old", "vieux vieille vieux vieilles", "老了", "不老", "老", very=False),
    _pa("sick", "sick", "malade malades", "病了", "没病", "病了", very=False, times="today"),
    _pa("ready", "ready", "prêt prête prêts prêtes", "准备好了", "没准备好", "准备好了",
        very=False, times="now"),
    _pa("late", "late", "en_retard", "迟到了", "没迟到", "迟到了", very=False, times="today"),
    _pa("free", "free", "libre libres", "有空", "没空", "有空", very=False,
        times="today now tomorrow"),
    _pa("hungry", "hungry", "faim", "饿了", "不饿", "饿了", very=False, times="now",
        avoir=True),
    _pa("thirsty", "thirsty", "soif", "渴了", "不渴", "渴了", very=False, times="now",
        avoir=True),
    _pa("sleepy", "sleepy", "sommeil", "困了", "不困", "困了", very=False, times="now",
        avoir=True),
    _pa("cold", "cold", "froid", "很冷", "不冷", "冷", very=False, times="now", avoir=True),
    _pa("afraid", "afraid", "peur", "很害怕", "不害怕", "害怕", very=False, avoir=True),
]


def _na(key, en, fr, zh_pos, zh_neg, zh_q, nouns, very=True, avoir=False):
    return _Adj(key, en, fr, zh_pos=zh_pos, zh_neg=zh_neg, zh_q=zh_q, very=very, nouns=nouns,
                avoir=avoir)


_ANIMALS = "dog cat bird horse rabbit mouse duck"
_COLOURABLE = "car bike bag hat shirt jacket umbrella pen cup box lamp phone wallet house"

#: Adjectives said of animals and things (my car is red; this dog is small).
_NP_ADJ = [
    _na("small", "small", "petit petite petits petites", "很小", "不小", "小",
        _ANIMALS + " house room car bag box table bed hat"),
    _na("big", "big", "grand grande grands grandes", "很大", "不大", "大",
        "dog horse house room car bag box table bed hat"),
    _na("oldanimal", "old", "vieux vieille vieux vieilles", "老了", "不老", "老", "dog cat horse",
        very=False),
    _na("cute", "cute", "mignon mignonne mignons mignonnes", "很可爱", "不可爱", "可爱",
        "dog cat bird rabbit mouse duck"),
    _na("smartanimal", "smart", "intelligent intelligente intelligents intelligentes",
        "很聪明", "不聪明", "聪明", "dog cat horse"),
    _na("hungryanimal", "hungry", "faim", "饿了", "不饿", "饿了", "dog cat horse rabbit",
        very=False, avoir=True),
    _na("sickanimal", "sick", "malade malades", "病了", "没病", "病了", "dog cat horse rabbit",
        very=False),
    _na("new", "new", "neuf neuve neufs neuves", "是新的", "不是新的", "是新的",
        "car bike house phone computer watch bag hat umbrella shirt jacket wallet", very=False),
    _na("oldthing", "old", "vieux vieille vieux vieilles", "很旧", "不旧", "旧",
        "car bike house phone computer watch bag hat umbrella shirt jacket wallet book table"),
    _na("expensive", "expensive", "cher chère chers chères", "很贵", "不贵", "贵",
        "car bike house phone computer watch bag hat shirt jacket wallet book"),
    _na("heavy", "heavy", "lourd lourde lourds lourdes", "很重", "不重", "重",
        "bag box table computer bike chair"),
    _na("clean", "clean", "propre propres", "很干净", "不干净", "干净",
        "car house room cup shirt jacket table bike"),
    _na("dirty", "dirty", "sale sales", "很脏", "不脏", "脏",
        "car house room cup shirt jacket table bike"),
    _na("beautiful", "beautiful", "beau belle beaux belles bel", "很漂亮", "不漂亮", "漂亮",
        "house car flower photo watch jacket hat bag room lamp horse bird"),
] + [
    _na(en, en, fr, f"是{zh}色的", f"不是{zh}色的", f"是{zh}色的", nouns, very=False)
    for en, fr, zh, nouns in [
        ("red", "rouge rouges", "红", _COLOURABLE + " flower"),
        ("blue", "bleu bleue bleus bleues", "蓝", _COLOURABLE),
        ("green", "vert verte verts vertes", "绿", _COLOURABLE),
        ("black", "noir noire noirs noires", "黑", _COLOURABLE + " dog cat horse rabbit"),
        ("white", "blanc blanche blancs blanches", "白", _COLOURABLE + " dog cat horse rabbit "
         "flower"),
        ("yellow", "jaune jaunes", "黄", _COLOURABLE + " flower bird"),
        ("grey", "gris grise gris grises", "灰", _COLOURABLE + " cat mouse rabbit"),
    ]
]


def _aa(key, en, fr, pos, zh_attr, nouns):
    return _Adj(key, en, fr, pos=pos, zh_attr=zh_attr, nouns=nouns)


#: Adjectives inside a noun phrase (a new car = une nouvelle voiture = 一辆新车).
_ATTR_ADJ = [
    _aa("big", "big", "grand grande grands grandes", "pre", "大",
        "house room bag box table bed dog"),
    _aa("small", "small", "petit petite petits petites", "pre", "小",
        "house room bag box table bed dog car bird rabbit"),
    _aa("new", "new", "nouveau nouvelle nouveaux nouvelles nouvel", "pre", "新",
        "car bike house phone computer watch bag book hat umbrella shirt wallet"),
    _aa("oldthing", "old", "vieux vieille vieux vieilles vieil", "pre", "旧",
        "car bike house phone computer watch bag book hat umbrella"),
    _aa("oldanimal", "old", "vieux vieille vieux vieilles vieil", "pre", "老", "dog cat horse"),
    _aa("beautiful", "beautiful", "beau belle beaux belles bel", "pre", "漂亮的",
        "house car flower photo watch jacket hat bag bike room lamp horse bird"),
    _aa("cute", "cute", "mignon mignonne mignons mignonnes", "post", "可爱的",
        "dog cat rabbit bird duck"),
] + [
    _aa(en, en, fr, "post", f"{zh}色的", nouns) for en, fr, zh, nouns in [
        ("red", "rouge rouges", "红", "car bike bag hat shirt jacket umbrella pen cup box"),
        ("blue", "bleu bleue bleus bleues", "蓝", "car bike bag hat shirt jacket umbrella pen"),
        ("green", "vert verte verts vertes", "绿", "car bike bag hat shirt jacket umbrella"),
        ("black", "noir noire noirs noires", "黑",
         "car bike bag hat shirt jacket umbrella pen dog cat horse"),
        ("white", "blanc blanche blancs blanches", "白",
         "car bike bag hat shirt jacket cup dog cat horse rabbit"),
        ("yellow", "jaune jaunes", "黄", "car bike bag hat shirt jacket umbrella"),
        ("grey", "gris grise gris grises", "灰", "car bag hat cat mouse rabbit"),
    ]
]
_ATTR = {a.key: a for a in _ATTR_ADJ}


# ---------------------------------------------------------------------------------------------
# noun phrases
# ---------------------------------------------------------------------------------------------

class _NP:
    """A noun phrase: a determiner (``a``, ``num``, ``the``, ``this``, ``that``, ``poss``,
    ``nposs`` (Tom's), ``gen`` (generic: cats = les chats), ``part`` (partitive: fish = du
    poisson), ``cont`` (a cup of tea), ``name``, ``fixed``, ``what``) and its noun."""

    __slots__ = ("adj", "cont", "det", "fixed", "k", "name", "noun", "owner", "pl")

    def __init__(self, det, noun=None, adj=None, k=1, owner=None, name=None, pl=False,
                 fixed=None, cont=None):
        self.det, self.noun, self.adj, self.k, self.owner = det, noun, adj, k, owner
        self.name, self.pl, self.fixed, self.cont = name, pl, fixed, cont

    def plural(self) -> bool:
        return self.pl or self.det == "num" or (self.det in ("gen", "part")
                                                and not self.noun.mass)

    def with_owner(self, owner: str) -> _NP:
        return _NP(self.det, self.noun, self.adj, self.k, owner, self.name, self.pl,
                   self.fixed, self.cont)

    @property
    def ident(self) -> str:
        """Who or what the phrase names (to avoid "Tom knows Tom")."""
        if self.det == "name":
            return self.name.en
        if self.det in ("poss", "nposs"):
            owner = self.owner if self.det == "poss" else self.name.en
            return f"{owner}:{self.noun.key}"
        return f"{self.det}:{self.noun.key if self.noun else self.fixed[0]}"


def _fixed(en: str, fr: str, zh: str) -> _NP:
    return _NP("fixed", fixed=(en, fr.split(), zh))


_CONTAINERS = {  # a cup of tea, a glass of water: English, English plural, French, gender
    "cup": ("cup", "cups", "tasse", "tasses", "f"),
    "glass": ("glass", "glasses", "verre", "verres", "m"),
}


def _np_en(np: _NP) -> str:
    d = np.det
    if d == "name":
        return np.name.en
    if d == "fixed":
        return np.fixed[0]
    n = np.noun
    if d == "cont":
        c = _CONTAINERS[np.cont]
        return (f"a {c[0]}" if np.k == 1 else f"{_NUM_EN[np.k]} {c[1]}") + " of " + n.en
    pl = np.plural()
    head = n.en_pl if pl else n.en
    if np.adj:
        head = np.adj.en + " " + head
    if d == "a":
        return _a_an(head)
    if d == "num":
        return f"{_NUM_EN[np.k]} {head}"
    if d == "the":
        return "the " + head
    if d == "this":
        return ("these " if pl else "this ") + head
    if d == "that":
        return ("those " if pl else "that ") + head
    if d == "poss":
        return _PRONS[np.owner].own_en + " " + head
    if d == "nposs":
        return f"{np.name.en}'s {head}"
    if d == "what":
        return "what " + (head if pl else _a_an(head))
    return head  # gen, part


def _fr_body(n: _Noun, adj: _Adj | None, pl: bool) -> list[str]:
    noun = n.fr_pl if pl else n.fr
    if adj is None:
        return [noun]
    if adj.pos == "pre":
        return [adj.agree(n.g, pl, _fr_vowel(noun)), noun]
    return [noun, adj.agree(n.g, pl)]


def _np_fr(np: _NP, neg: bool = False) -> list[str]:
    """The French words of ``np``; ``neg``: the object of a negated verb (un, des, du → de)."""
    d = np.det
    if d == "name":
        return [np.name.fr]
    if d == "fixed":
        return list(np.fixed[1])
    n = np.noun
    if d == "cont":
        c = _CONTAINERS[np.cont]
        art = _NUM_FR[np.k] if np.k > 1 else ("un" if c[4] == "m" else "une")
        return [art, c[2] if np.k == 1 else c[3], "de", n.fr]
    pl = np.plural()
    body = _fr_body(n, np.adj, pl)
    g = n.g
    definite = "les" if pl else ("le" if g == "m" else "la")
    if d == "a":
        return (["de"] if neg else ["un" if g == "m" else "une"]) + body
    if d == "num":
        return [_NUM_FR[np.k]] + body
    if d in ("the", "gen"):
        return [definite] + body
    if d == "part":
        if neg:
            return ["de"] + body
        return (["des"] if pl else ["de", definite]) + body  # de le → du, de la, de l'
    if d in ("this", "that"):
        if pl:
            det = "ces"
        elif g == "f":
            det = "cette"
        else:
            det = "cet" if _fr_vowel(body[0]) else "ce"
        return [det] + body
    if d == "poss":
        m, f, p = _PRONS[np.owner].own_fr
        if pl:
            det = p
        else:
            det = m if g == "m" or _fr_vowel(body[0]) else f  # mon amie, mon école
        return [det] + body
    if d == "nposs":
        return [definite] + body + ["de", np.name.fr]
    if d == "what":
        return [("quels" if g == "m" else "quelles") if pl else ("quel" if g == "m" else
                                                               "quelle")] + body
    raise ValueError(d)


def _np_zh(np: _NP, bare: bool = False) -> str:
    """The Chinese of ``np``; ``bare`` drops 一 + measure word (negations, questions)."""
    d = np.det
    if d == "name":
        return np.name.zh
    if d == "fixed":
        return np.fixed[2]
    n = np.noun
    if d == "cont":
        return n.zh if bare else ("一" if np.k == 1 else _NUM_ZH[np.k]) + "杯" + n.zh
    head = (np.adj.zh_attr if np.adj else "") + n.zh
    if d == "a":
        return head if bare else "一" + n.cl + head
    if d == "num":
        return _NUM_ZH[np.k] + n.cl + head
    if d == "this":
        return ("这些" if np.pl else "这" + n.cl) + head
    if d == "that":
        return ("那些" if np.pl else "那" + n.cl) + head
    if d == "poss":
        own = _PRONS[np.owner]
        return own.zh + ("" if n.kin and not own.pl else "的") + head
    if d == "nposs":
        return np.name.zh + "的" + head
    return head  # the, gen, part


# ---------------------------------------------------------------------------------------------
# subjects and clauses
# ---------------------------------------------------------------------------------------------

class _Subj:
    """A clause subject with what each language needs: English (form, contraction with "be",
    "am/is/are", third person singular), French (words, the pronoun when it is one, person
    0–5 for conjugation, gender, plural) and Chinese; ``ident`` names who it is (I, Tom,
    I:mother) and ``noun`` is its noun, if any."""

    __slots__ = ("be", "contr", "en", "fr", "g", "ident", "key", "keys", "noun", "p", "pl",
                 "pron", "s3", "zh")

    def __init__(self, key, en, contr, be, s3, fr, pron, p, g, pl, zh, ident, noun=None):
        self.key, self.en, self.contr, self.be, self.s3 = key, en, contr, be, s3
        self.fr, self.pron, self.p, self.g, self.pl = fr, pron, p, g, pl
        self.zh, self.ident, self.noun = zh, ident, noun
        #: what an object or a question must not share with it (see _build's add_people)
        self.keys = frozenset({ident, "Q:" + key})


def _pron_subj(key: str) -> _Subj:
    p = _PRONS[key]
    return _Subj(key, p.en, p.contr, p.be, p.p == 2, [p.fr], p.fr, p.p, p.g, p.pl, p.zh, key)


def _name_subj(name: _Name) -> _Subj:
    return _Subj("name", name.en, "", "is", True, [name.fr], None, 2, name.g, False, name.zh,
                 name.en)


def _np_subj(np: _NP) -> _Subj:
    pl = np.plural()
    return _Subj("np", _np_en(np), "", "are" if pl else "is", not pl, _np_fr(np), None,
                 5 if pl else 2, np.noun.g, pl, _np_zh(np), np.ident, np.noun)


def _adapt(np: _NP, s: _Subj) -> _NP:
    """"your" is votre/vos, 你们的 when the subject is "you guys" (vous)."""
    if s.key == "youpl" and np.det == "poss" and np.owner == "you":
        return np.with_owner("youpl")
    return np


def _en_be(s: _Subj, comp: str, mood: str) -> str:
    """An English clause with "be": I'm tired. / He isn't tired. / Is Tom tired?"""
    if mood == "?":
        return _en_out([{"am": "Am", "is": "Is", "are": "Are"}[s.be], s.en, comp], mood)
    if mood == "+":
        return _en_out([s.contr or f"{s.en} {s.be}", comp], mood)
    head = "I'm not" if s.be == "am" else f"{s.en} {s.be}n't"
    return _en_out([head, comp], mood)


def _en_do(s: _Subj, v: _Verb, comp: str, mood: str, tense: str = "pres") -> str:
    """An English clause with a lexical verb in the present or the past (``tense="past"``),
    do-support in negations and questions: He likes cats. / I don't have a car. / Did you
    see Tom? ``comp`` is what follows the verb."""
    base = v.en
    if tense == "pres":
        if mood == "+":
            head = [s.en, v.s3 if s.s3 else v.en]
        elif mood == "-":
            head = [s.en, "doesn't" if s.s3 else "don't", base]
        else:
            head = ["Does" if s.s3 else "Do", s.en, base]
    elif mood == "+":
        head = [s.en, v.past]
    elif mood == "-":
        head = [s.en, "didn't", base]
    else:
        head = ["Did", s.en, base]
    return _en_out(head + [comp], mood)


_ETRE = _V["be"].pres
_AVOIR = _V["have"].pres


def _fr_clause(s: _Subj, finite: Sequence[str], after: list[str], after_neg: list[str],
               mood: str) -> list[str]:
    """French word order: ``finite`` is the present of the conjugated verb (je … ils);
    negation ne … pas around it; questions by inversion (A-t-il…, Es-tu…) for a pronoun
    subject other than je, else Est-ce que."""
    f = finite[s.p]
    if mood == "+":
        return s.fr + [f] + after
    if mood == "-":
        return s.fr + ["ne", f, "pas"] + after_neg
    if s.pron and s.pron != "je":
        link = "-t-" if f[-1] in "ae" and s.pron in ("il", "elle") else "-"
        return [f + link + s.pron] + after
    return ["est-ce", "que"] + s.fr + [f] + after


def _pp(v: _Verb, s: _Subj) -> str:
    """A past participle, agreeing with the subject after être (allée, venus)."""
    if not v.etre:
        return v.pp
    return v.pp + ("e" if s.g == "f" else "") + ("s" if s.pl else "")


def _zh_clause(subj: str, time: str | None, pos: str, neg: str, q: str, mood: str) -> str:
    """Chinese: subject, time word, then the predicate of the mood (q gets 吗)."""
    pred = {"+": pos, "-": neg, "?": q + "吗"}[mood]
    return _zh_out(subj + _t_zh(time) + pred, mood)


# ---------------------------------------------------------------------------------------------
# places, languages, activities
# ---------------------------------------------------------------------------------------------

class _Place:
    __slots__ = ("en_at", "en_to", "fr", "key", "tags", "zh")

    def __init__(self, key, en_at, fr, zh, tags):
        self.key, self.en_at, self.fr, self.zh = key, en_at, fr, zh
        self.tags = frozenset(tags.split())
        self.en_to = "to " + en_at.split(" ", 1)[1]  # at the park: to the park


_PLACES_TABLE = """
# key      | at                 | French            | Chinese | tags
home       | at home            | à la maison       | 家      | be work act
school     | at school          | à l'école         | 学校    | be go act
park       | at the park        | au parc           | 公园    | be go act
library    | at the library     | à la bibliothèque | 图书馆  | be go work act
station    | at the station     | à la gare         | 车站    | be go work
hospital   | at the hospital    | à l'hôpital       | 医院    | be go work
office     | at the office      | au bureau         | 办公室  | be go work act
bank       | at the bank        | à la banque       | 银行    | be go work
beach      | at the beach       | à la plage        | 海边    | be go act
postoffice | at the post office | à la poste        | 邮局    | be go work
pool       | at the pool        | à la piscine      | 游泳池  | be go act
hotel      | at the hotel       | à l'hôtel         | 酒店    | be go work
market     | at the market      | au marché         | 市场    | be go work
restaurant | at the restaurant  | au restaurant     | 餐馆    | be go work
garden     | in the garden      | dans le jardin    | 花园里  | be act animal
kitchen    | in the kitchen     | dans la cuisine   | 厨房里  | be act animal
livingroom | in the living room | dans le salon     | 客厅里  | be act animal
car        | in the car         | dans la voiture   | 车里    | be act animal
Paris      | in Paris           | à Paris           | 巴黎    | be go work live city
London     | in London          | à Londres         | 伦敦    | be go work live city
Tokyo      | in Tokyo           | à Tokyo           | 东京    | be go work live city
Beijing    | in Beijing         | à Pékin           | 北京    | be go work live city
Shanghai   | in Shanghai        | à Shanghai        | 上海    | be go work live city
Rome       | in Rome            | à Rome            | 罗马    | be go work live city
Berlin     | in Berlin          | à Berlin          | 柏林    | be go work live city
Boston     | in Boston          | à Boston          | 波士顿  | be go work live city
France     | in France          | en France         | 法国    | be go work live country
China      | in China           | en Chine          | 中国    | be go work live country
Japan      | in Japan           | au Japon          | 日本    | be go work live country
Canada     | in Canada          | au Canada         | 加拿大  | be go work live country
Italy      | in Italy           | en Italie         | 意大利  | be go work live country
Germany    | in Germany         | en Allemagne      | 德国    | be go work live country
Spain      | in Spain           | en Espagne        | 西班牙  | be go work live country
Mexico     | in Mexico          | au Mexique        | 墨西哥  | be go work live country
"""
_PLACES = {r[0]: _Place(*r) for r in _rows(_PLACES_TABLE)}


def _places(tag: str) -> list[_Place]:
    return [p for p in _PLACES.values() if tag in p.tags]


#: Where things are (my keys are on the table; there's a cat under the bed). Chinese puts the
#: place first with 上/里/底下 (桌子上有一本书).
_LOCATIONS_TABLE = """
# key      | English            | French          | Chinese
table      | on the table       | sur la table    | 桌子上
chair      | on the chair       | sur la chaise   | 椅子上
bag        | in my bag          | dans mon sac    | 我的包里
box        | in the box         | dans la boîte   | 盒子里
bed        | under the bed      | sous le lit     | 床底下
undertable | under the table    | sous la table   | 桌子底下
car        | in the car         | dans la voiture | 车里
kitchen    | in the kitchen     | dans la cuisine | 厨房里
garden     | in the garden      | dans le jardin  | 花园里
livingroom | in the living room | dans le salon   | 客厅里
room       | in my room         | dans ma chambre | 我的房间里
park       | in the park        | dans le parc    | 公园里
"""
_LOCATED = {  # what can be found there
    "table": ("book pen key phone watch letter apple orange banana cup newspaper photo hat "
              "bag cat lamp wallet box"),
    "chair": "book bag hat cat newspaper shirt box",
    "bag": ("book pen key phone watch letter apple orange banana umbrella wallet photo "
            "newspaper sandwich"),
    "box": "book pen key watch letter photo cat mouse",
    "bed": "cat dog mouse book bag box",
    "undertable": "cat dog mouse bag box",
    "car": "dog cat bag book umbrella phone box hat",
    "kitchen": "cat dog mouse table chair cup lamp",
    "garden": "cat dog bird rabbit duck horse table chair flower",
    "livingroom": "cat dog table chair lamp computer",
    "room": "bed table chair lamp computer cat dog box bag",
    "park": "dog bird duck rabbit",
}
_LOCATIONS = [(r[1], r[2].split(), r[3], frozenset(_LOCATED[r[0]].split()))
              for r in _rows(_LOCATIONS_TABLE)]

_LANGUAGES = [  # English, French (a noun: le français), Chinese
    ("French", "français", "法语"), ("English", "anglais", "英语"), ("Chinese", "chinois", "中文"),
    ("Spanish", "espagnol", "西班牙语"), ("German", "allemand", "德语"),
    ("Japanese", "japonais", "日语"), ("Italian", "italien", "意大利语"),
]
_SUBJECTS_OF_STUDY = [(en, ["le", fr], zh) for en, fr, zh in _LANGUAGES] + [
    ("math", ["les", "maths"], "数学"), ("history", ["la", "histoire"], "历史"),
    ("music", ["la", "musique"], "音乐"), ("physics", ["la", "physique"], "物理"),
    ("chemistry", ["la", "chimie"], "化学"),
]

#: Games and instruments: English object, French (jouer + à/de), Chinese verb + object.
_PLAYABLE = [
    ("the piano", ["du", "piano"], "弹钢琴"), ("the guitar", ["de", "la", "guitare"], "弹吉他"),
    ("the violin", ["du", "violon"], "拉小提琴"), ("tennis", ["au", "tennis"], "打网球"),
    ("soccer", ["au", "football"], "踢足球"), ("basketball", ["au", "basket"], "打篮球"),
    ("chess", ["aux", "échecs"], "下国际象棋"),
]

#: Skills for "can" (savoir + infinitive, 会): English, French infinitive phrase, Chinese.
_SKILLS = [
    ("swim", ["nager"], "游泳"), ("dance", ["danser"], "跳舞"), ("sing", ["chanter"], "唱歌"),
    ("cook", ["cuisiner"], "做饭"), ("drive", ["conduire"], "开车"),
    ("ride a bike", ["faire", "du", "vélo"], "骑自行车"), ("ski", ["skier"], "滑雪"),
] + [("play " + en, ["jouer"] + fr, zh) for en, fr, zh in _PLAYABLE]


class _Act:
    """An activity without an object (he's sleeping = il dort = 他在睡觉) and where it is
    done."""

    __slots__ = ("en", "fr", "places", "who", "zh")

    def __init__(self, en, fr, zh, places, who="person"):
        self.en, self.zh, self.who = en, zh, who
        inf, *forms = fr.split()
        self.fr = forms if forms else _Verb("x x x x", inf, "").pres
        self.places = [_PLACES[k] for k in places.split()]


_ACTIVITIES = [
    _Act("sleeping", "dormir dors dors dort dormons dormez dorment", "睡觉",
         "livingroom car home garden"),
    _Act("working", "travailler", "工作", "garden kitchen office library home"),
    _Act("reading", "lire lis lis lit lisons lisez lisent", "看书",
         "garden kitchen livingroom library park home"),
    _Act("swimming", "nager", "游泳", "beach pool"),
    _Act("dancing", "danser", "跳舞", "livingroom kitchen garden"),
    _Act("singing", "chanter", "唱歌", "kitchen garden livingroom car"),
    _Act("cooking", "cuisiner", "做饭", "kitchen"),
    _Act("studying", "étudier", "学习", "library home livingroom kitchen"),
    _Act("running", "courir cours cours court courons courez courent", "跑步", "park beach"),
    _Act("crying", "pleurer", "哭", "car kitchen garden livingroom"),
    _Act("eating", "manger", "吃饭", "kitchen garden livingroom"),
    _Act("sleeping", "dormir dors dors dort dormons dormez dorment", "睡觉",
         "garden kitchen livingroom car", "animal"),
    _Act("eating", "manger", "吃东西", "garden kitchen", "animal"),
    _Act("running", "courir cours cours court courons courez courent", "跑", "garden", "animal"),
]

_PROFESSIONS_TABLE = """
# en           | en_pl           | French (m f mp fp)                                  | zh
doctor         | doctors         | médecin médecin médecins médecins                   | 医生
student        | students        | étudiant étudiante étudiants étudiantes             | 学生
lawyer         | lawyers         | avocat avocate avocats avocates                     | 律师
nurse          | nurses          | infirmier infirmière infirmiers infirmières         | 护士
singer         | singers         | chanteur chanteuse chanteurs chanteuses             | 歌手
journalist     | journalists     | journaliste journaliste journalistes journalistes   | 记者
dentist        | dentists        | dentiste dentiste dentistes dentistes               | 牙医
pilot          | pilots          | pilote pilote pilotes pilotes                       | 飞行员
police officer | police officers | policier policière policiers policières             | 警察
baker          | bakers          | boulanger boulangère boulangers boulangères         | 面包师
farmer         | farmers         | agriculteur agricultrice agriculteurs agricultrices | 农民
musician       | musicians       | musicien musicienne musiciens musiciennes           | 音乐家
"""
_PROFESSIONS = [(r[0], r[1], r[2].split(), r[3]) for r in _rows(_PROFESSIONS_TABLE)]

_AGES = [("five", "cinq", "五"), ("six", "six", "六"), ("seven", "sept", "七"),
         ("eight", "huit", "八"), ("nine", "neuf", "九"), ("ten", "dix", "十"),
         ("twenty", "vingt", "二十"), ("thirty", "trente", "三十"), ("forty", "quarante", "四十")]

#: Fixed noun phrases (English, French, Chinese).
_F = {
    "tv": _fixed("TV", "la télé", "电视"),
    "radio": _fixed("the radio", "la radio", "广播"),
    "newspaper": _fixed("the newspaper", "le journal", "报纸"),
    "bus": _fixed("the bus", "le bus", "公交车"),
    "train": _fixed("the train", "le train", "火车"),
    "dinner": _fixed("dinner", "le dîner", "晚饭"),
    "lunch": _fixed("lunch", "le déjeuner", "午饭"),
    "breakfast": _fixed("breakfast", "le petit-déjeuner", "早饭"),
    "kitchen": _fixed("the kitchen", "la cuisine", "厨房"),
    "house": _fixed("the house", "la maison", "房子"),
    "thecar": _fixed("the car", "la voiture", "车"),
    "dishes": _fixed("the dishes", "la vaisselle", "碗"),
    "door": _fixed("the door", "la porte", "门"),
    "window": _fixed("the window", "la fenêtre", "窗户"),
}


# ---------------------------------------------------------------------------------------------
# subject inventories
# ---------------------------------------------------------------------------------------------

def _persons(fra: bool, tag: str = "") -> list[_Noun]:
    return [n for n in _N.values() if "person" in n.tags and (fra or "fra" not in n.tags)
            and (not tag or tag in n.tags)]


def _owner_ok(owner: str | _Name, n: _Noun) -> bool:
    """No "our wife" or "our jacket": "my wife", "his wife", "her husband", "Tom's wife",
    "Mary's husband", "our car"."""
    if "personal" in n.tags and owner in ("we", "they"):
        return False
    if "spouse" not in n.tags:
        return True
    g = owner.g if isinstance(owner, _Name) else {"I": "", "you": ""}.get(owner, "x")
    if owner in ("he", "she"):
        g = "m" if owner == "he" else "f"
    if g == "x":
        return False
    return g == "" or g == ("m" if n.key == "wife" else "f")


def _possessed(fra: bool, nouns: Sequence[_Noun], plural: bool = True) -> list[_NP]:
    """my/your/his… and Tom's … for each noun; plurals where French agreement shows them."""
    out = []
    for n in nouns:
        for o in _OWNERS:
            if _owner_ok(o, n):
                out.append(_NP("poss", n, owner=o))
                if plural and fra and "pl" in n.tags:
                    out.append(_NP("poss", n, owner=o, pl=True))
        for name in _NAMES:
            if _owner_ok(name, n):
                out.append(_NP("nposs", n, name=name))
    return out


def _person_subjects(fra: bool, exclude: str = "", pronouns: str = "I you he she we youpl "
                     "they") -> list[_Subj]:
    """Pronouns, names, "my mother", "Tom's father", "this man"; in French also plurals and
    "the boy", so that agreement in number and gender has something to agree with."""
    skip = set(exclude.split())
    subj = [_pron_subj(k) for k in pronouns.split()]
    subj += [_name_subj(n) for n in _NAMES]
    kin = [n for n in _persons(fra) if ("kin" in n.tags or "role" in n.tags)
           and n.key not in skip]
    subj += [_np_subj(np) for np in _possessed(fra, kin)]
    plain = [n for n in _persons(fra) if ("plain" in n.tags or n.key == "teacher")
             and n.key not in skip]
    for n in plain:
        for d in ("this", "that"):
            subj.append(_np_subj(_NP(d, n)))
            if fra:
                subj.append(_np_subj(_NP(d, n, pl=True)))
        if fra:
            subj.append(_np_subj(_NP("the", n)))
            subj.append(_np_subj(_NP("the", n, pl=True)))
    return subj


def _np_subjects(fra: bool, nouns: Sequence[_Noun]) -> list[_Subj]:
    """Animals and things as subjects: my dog, Tom's car, this house, these keys (the car in
    French)."""
    out = [_np_subj(np) for np in _possessed(fra, nouns, plural=False)]
    for n in nouns:
        # my keys = mes clés = 我的钥匙 (Chinese has no plural here)
        out += [_np_subj(_NP("poss", n, owner=o, pl=True)) for o in _OWNERS if _owner_ok(o, n)]
        for d in ("this", "that"):
            out.append(_np_subj(_NP(d, n)))
            out.append(_np_subj(_NP(d, n, pl=True)))
        if fra:
            out.append(_np_subj(_NP("the", n)))
            out.append(_np_subj(_NP("the", n, pl=True)))
    return out


def _generic_subj(n: _Noun) -> _Subj:
    """A generic plural subject: cats = les chats = 猫."""
    return _np_subj(_NP("gen", n))


# ---------------------------------------------------------------------------------------------
# verb phrases with an object
# ---------------------------------------------------------------------------------------------

class _VP:
    """A verb and its object (``np``), or a fixed phrase (``en``, ``fr``, ``zh`` given: go
    home = rentrer à la maison = 回家) used in the infinitive only."""

    __slots__ = ("en", "fr", "np", "verb", "zh", "zhv")

    def __init__(self, verb: str, np: _NP | None = None, zhv: str = "", en: str = "",
                 fr: Sequence[str] = (), zh: str = ""):
        self.verb, self.np, self.zhv, self.en, self.fr, self.zh = verb, np, zhv, en, fr, zh

    @property
    def v(self) -> _Verb:
        return _V[self.verb]

    def keys(self, owner_too: bool = False) -> frozenset:
        """Who the object names, to keep it apart from the subject."""
        if self.np is None:
            return frozenset()
        keys = {self.np.ident}
        if self.np.det == "nposs":  # Tom is calling his mother, not Tom's mother
            keys.add(self.np.name.en)
        if owner_too and self.np.det == "poss":  # not: I know my father
            keys.add(self.np.owner)
        return frozenset(keys)

    def en_obj(self, s: _Subj | None) -> str:
        """What follows the verb in English, with its particle (for, to)."""
        o = _np_en(_adapt(self.np, s) if s else self.np)
        return (self.v.prep + " " + o) if self.v.prep else o

    def en_form(self, s: _Subj | None, form: str = "en") -> str:
        """The English verb phrase; ``form``: en (base), s3, ing or past."""
        if self.np is None:
            return self.en
        return getattr(self.v, form) + " " + self.en_obj(s)

    def fr_obj(self, s: _Subj | None, neg: bool = False) -> list[str]:
        if self.np is None:
            return list(self.fr[1:])
        return _np_fr(_adapt(self.np, s) if s else self.np, neg)

    def fr_inf(self, s: _Subj | None, neg: bool = False) -> list[str]:
        """The French infinitive phrase (acheter une voiture; negated: acheter de voiture)."""
        if self.np is None:
            return list(self.fr)
        return [self.v.inf] + self.fr_obj(s, neg)

    def zh_vp(self, s: _Subj | None, form: str = "pres", bare: bool = False) -> str:
        """Chinese verb + object; ``form``: pres, past (V了O, 给O打了电话), imp (帮帮O)."""
        if self.np is None:
            return self.zh
        # one takes 出租车, not 一辆出租车
        o = _np_zh(_adapt(self.np, s) if s else self.np, bare or self.verb == "take")
        if self.verb == "call":
            return "给" + o + ("打了电话" if form == "past" else "打电话")
        v = self.zhv or self.v.zh
        if form == "past":
            return v + "了" + o
        if form == "imp" and self.verb in ("help", "wait"):
            v = v + v
        return v + o

    @property
    def negatable(self) -> bool:
        """Can the clause be negated? Not with a number or a cup of (I didn't eat two …)."""
        return self.np is None or self.np.det not in ("num", "cont")


def _vp(verb: str, nps: Sequence[_NP], zhv: str = "") -> list[_VP]:
    return [_VP(verb, np, zhv) for np in nps]


def _a(keys: str, adjs: bool = False) -> list[_NP]:
    """a/an + noun, and with each fitting attributive adjective when ``adjs``."""
    out = []
    for n in _nouns(keys):
        out.append(_NP("a", n))
        if adjs:
            out += [_NP("a", n, adj=a) for a in _ATTR_ADJ if n.key in a.nouns]
    return out


def _num(keys: str, ks: Sequence[int] = (2, 3), adjs: bool = False) -> list[_NP]:
    out = []
    for n in _nouns(keys):
        for k in ks:
            out.append(_NP("num", n, k=k))
            if adjs:
                out += [_NP("num", n, adj=a, k=k) for a in _ATTR_ADJ if n.key in a.nouns]
    return out


def _poss(keys: str, pl: bool = False) -> list[_NP]:
    return [_NP("poss", n, owner=o, pl=pl) for n in _nouns(keys) for o in _OWNERS
            if _owner_ok(o, n)]


def _dem(keys: str, which: str = "this that") -> list[_NP]:
    return [_NP(d, n) for n in _nouns(keys) for d in which.split()]


def _names() -> list[_NP]:
    return [_NP("name", name=n) for n in _NAMES]


def _kin(fra: bool) -> list[_NP]:
    """People one calls, helps, waits for: my mother, Tom's father …"""
    ns = [n for n in _persons(fra) if "kin" in n.tags or "role" in n.tags]
    return [np for np in _possessed(fra, ns, plural=False)]


def _cont(drinks: str = "tea coffee water milk juice", ks: Sequence[int] = (1,)) -> list[_NP]:
    out = []
    for n in _nouns(drinks):
        c = "cup" if n.key in ("tea", "coffee") else "glass"
        out += [_NP("cont", n, k=k, cont=c) for k in ks]
    return out


_HAVEABLE = "car bike house computer phone watch umbrella bag hat pen wallet jacket"
_COUNT_FOOD = "apple orange egg banana sandwich pear tomato carrot"
_MASS_FOOD = "bread rice meat fish cheese chicken chocolate"
_DRINKS = "tea coffee milk water juice beer wine"
_DIET = {  # what animals eat and drink (generic: cats like fish)
    "dog": ("meat chicken", "water"), "cat": ("fish meat chicken", "milk water"),
    "bird": ("bread", ""), "horse": ("apple carrot", "water"), "rabbit": ("carrot", ""),
    "mouse": ("cheese bread", ""), "duck": ("bread", ""),
}
_ACTIVITY_GERUNDS = [("swimming", ["nager"], "游泳"), ("dancing", ["danser"], "跳舞"),
                     ("singing", ["chanter"], "唱歌"), ("reading", ["lire"], "看书"),
                     ("cooking", ["cuisiner"], "做饭"), ("running", ["courir"], "跑步"),
                     ("skiing", ["skier"], "滑雪")]


# ---------------------------------------------------------------------------------------------
# templates
# ---------------------------------------------------------------------------------------------

class _Template:
    """Sentences of one pattern: the product of its slot lists, decoded by index."""

    __slots__ = ("clash", "fn", "name", "size", "slots", "valid", "weight")

    def __init__(self, name: str, weight: float, slots: Sequence[Sequence[Any]],
                 fn: Callable[..., tuple[str, str]],
                 clash: tuple[Callable[[Any], frozenset], Callable[[Any], frozenset]] | None
                 = None):
        """``clash``: keys of a first-slot item and keys of a second-slot item; an index whose
        two items share a key is not a sentence (Tom is waiting for Tom; Do I like cats?)."""
        self.name, self.weight, self.fn, self.clash = name, weight, fn, clash
        self.slots = [list(s) for s in slots]
        self.size = 1
        for s in self.slots:
            self.size *= len(s)
        self.valid = self.size
        if clash:  # count the clashing pairs exactly, through the distinct key sets
            groups: dict[frozenset, int] = {}
            for item in self.slots[1]:
                ks = clash[1](item)
                if ks:
                    groups[ks] = groups.get(ks, 0) + 1
            sets = list(groups.items())
            index: dict[str, list[int]] = {}
            for g, (ks, _) in enumerate(sets):
                for k in ks:
                    index.setdefault(k, []).append(g)
            bad = 0
            for item in self.slots[0]:
                hit: set[int] = set()
                for k in clash[0](item):
                    hit.update(index.get(k, ()))
                bad += sum(sets[g][1] for g in hit)
            self.valid -= bad * (self.size // (len(self.slots[0]) * len(self.slots[1])))

    def items(self, i: int) -> list[Any]:
        items = []
        for s in reversed(self.slots):
            i, r = divmod(i, len(s))
            items.append(s[r])
        items.reverse()
        return items

    def __getitem__(self, i: int) -> tuple[str, str] | None:
        """The pair of index ``i``, or None where its first two items clash."""
        items = self.items(i)
        if self.clash and self.clash[0](items[0]) & self.clash[1](items[1]):
            return None
        return self.fn(*items)

    def __iter__(self):
        for i in range(self.size):
            pair = self[i]
            if pair is not None:
                yield pair


_MOODS = ("+", "-", "?")


def _combos(*lists: Sequence[Any]) -> list[tuple]:
    return list(product(*lists))


def _build(pair: str) -> list[_Template]:
    """The grammar of ``pair``: a list of weighted templates."""
    fra = pair == _FRA
    T: list[_Template] = []

    def add(name: str, weight: float, slots: Sequence[Sequence[Any]], fn: Callable) -> None:
        T.append(_Template(name, weight, slots, fn))

    def add_people(name: str, weight: float, subjects: Sequence[_Subj],
                   items: Sequence[tuple], fn: Callable, ban: str = "I") -> None:
        """A template ``fn(subject, item)`` whose items end with their mood. It is split in
        two, so that pronouns and names (I, he, Tom) are more frequent than noun phrases
        (Tom's mother), as in Tatoeba. No object repeats its subject (Tom knows Tom), and
        the pronouns in ``ban`` ask no questions (Do I like cats? Can we swim?)."""
        qkeys = frozenset("Q:" + b for b in ban.split())

        def item_keys(item: tuple) -> frozenset:
            keys = item[0].keys(owner_too=name == "know") if isinstance(item[0], _VP) \
                else frozenset()
            return keys | qkeys if item[-1] == "?" else keys

        clash = (lambda s: s.keys, item_keys)
        short = [s for s in subjects if s.key != "np"]
        long_ = [s for s in subjects if s.key == "np"]
        share = 0.65 if short and long_ else 1.0
        if short:
            T.append(_Template(name, weight * share, [short, items], fn, clash))
        if long_:
            T.append(_Template(name + "/np", weight * (1 - share if short else 1), [long_, items],
                               fn, clash))

    def add_vps(name: str, weight: float, subjects: Sequence[_Subj], items: Sequence[tuple],
                fn: Callable, ban: str = "I") -> None:
        """``add_people`` once per verb, weighted by the square root of its number of
        items, so that verbs with many objects (call Tom's mother) do not crowd out the
        others (listen to the radio)."""
        groups: dict[str, list[tuple]] = {}
        for item in items:
            vp = item[0]
            groups.setdefault(vp.verb or vp.en.split()[0], []).append(item)
        norm = sum(len(g) ** 0.5 for g in groups.values())
        for key, group in groups.items():
            add_people(f"{name}:{key}", weight * len(group) ** 0.5 / norm, subjects, group, fn,
                       ban)

    def out(en: str, fr: Callable[[], list[str]], zh: Callable[[], str], mood: str
            ) -> tuple[str, str]:
        """The pair for this grammar: ``fr`` gives the French words, ``zh`` the Chinese
        sentence (only the one needed is made)."""
        return (en, _fr_out(fr(), mood)) if fra else (en, zh())

    people = _person_subjects(fra)
    animal_nouns = _nouns(_ANIMALS)
    thing_keys = sorted({k for a in _NP_ADJ for k in a.nouns} - set(_ANIMALS.split()))
    animals = _np_subjects(fra, animal_nouns)
    things = _np_subjects(fra, _nouns(" ".join(thing_keys)))

    # -- be + adjective: he's tired, I'm hungry, my car is red ---------------------------
    def be_adj(s: _Subj, c: tuple) -> tuple:
        adj, time, very, mood = c
        en = _en_be(s, ("very " if very else "") + adj.en + " " + _t_en(time), mood)
        word = adj.fr[0] if adj.avoir else adj.agree(s.g, s.pl)
        after = (["très"] if very else []) + [word, _t_fr(time)]
        pos = adj.zh_very() if very else adj.zh_pos
        return out(en, lambda: _fr_clause(s, _AVOIR if adj.avoir else _ETRE, after, after, mood),
                   lambda: _zh_clause(s.zh, time, pos, adj.zh_neg, adj.zh_q, mood), mood)

    person_adj = [(a, t, False, m) for a in _PERSON_ADJ for t in (None,) + a.times
                  for m in _MOODS]
    person_adj += [(a, t, True, "+") for a in _PERSON_ADJ if a.very for t in (None,) + a.times]
    add_people("be_adj", 16, people, person_adj, be_adj, ban="")

    np_adj = [(s, (a, None, False, m)) for s in animals + things for a in _NP_ADJ
              if s.noun.key in a.nouns for m in _MOODS]
    np_adj += [(s, (a, None, True, "+")) for s in animals + things for a in _NP_ADJ
               if s.noun.key in a.nouns and a.very]
    add("be_adj_np", 12, [np_adj], lambda sc: be_adj(*sc))

    # -- be + profession, place, age -----------------------------------------------------
    def be_prof(s: _Subj, c: tuple) -> tuple:
        (en_sg, en_pl, fr_forms, zh), mood = c
        en = _en_be(s, en_pl if s.pl else _a_an(en_sg), mood)
        word = fr_forms[(2 if s.pl else 0) + (1 if s.g == "f" else 0)]
        return out(en, lambda: _fr_clause(s, _ETRE, [word], [word], mood),
                   lambda: _zh_clause(s.zh, None, "是" + zh, "不是" + zh, "是" + zh, mood), mood)

    add_people("be_profession", 5, _person_subjects(fra, exclude="teacher student child boss"),
               _combos(_PROFESSIONS, _MOODS), be_prof)

    def be_place(s: _Subj, c: tuple) -> tuple:
        place, time, mood = c
        en = _en_be(s, place.en_at + " " + _t_en(time), mood)
        after = [place.fr, _t_fr(time)]
        return out(en, lambda: _fr_clause(s, _ETRE, after, after, mood),
                   lambda: _zh_clause(s.zh, time, "在" + place.zh, "不在" + place.zh,
                                      "在" + place.zh, mood), mood)

    place_c = [(p, t, m) for p in _places("be") for t in (
        (None, "now") if "animal" in p.tags else (None, "now", "today")) for m in _MOODS]
    add_people("be_place", 8, people, place_c, be_place)

    def be_loc(s: _Subj, c: tuple) -> tuple:
        (en_loc, fr_loc, zh_loc, _), mood = c
        return out(_en_be(s, en_loc, mood), lambda: _fr_clause(s, _ETRE, fr_loc, fr_loc, mood),
                   lambda: _zh_clause(s.zh, None, "在" + zh_loc, "不在" + zh_loc,
                                      "在" + zh_loc, mood), mood)

    located = _np_subjects(fra, _nouns("book pen key phone watch letter apple cup newspaper "
                                       "photo hat bag umbrella wallet box " + _ANIMALS))
    add("be_location", 4, [[(s, (loc, m)) for s in located for loc in _LOCATIONS
                            if s.noun.key in loc[3] for m in _MOODS]], lambda sc: be_loc(*sc))

    def be_age(s: _Subj, c: tuple) -> tuple:
        age, mood = c
        after = [age[1], "ans"]
        return out(_en_be(s, age[0], mood), lambda: _fr_clause(s, _AVOIR, after, after, mood),
                   lambda: _zh_clause(s.zh, None, age[2] + "岁", "", age[2] + "岁", mood), mood)

    age_subj = [_pron_subj(k) for k in ("I", "you", "he", "she")] + \
        [_name_subj(n) for n in _NAMES] + \
        [_np_subj(np) for np in _possessed(fra, [n for n in _persons(fra, "child")] +
                                          [_N["friend"]], plural=False)]
    add_people("age", 2, age_subj, _combos(_AGES, ("+", "?")), be_age)
    kids = [_np_subj(_NP(d, _N[k])) for k in ("boy", "girl", "child") for d in ("this", "that")]
    add_people("age_child", 0.5, kids, _combos(_AGES[:6], ("+", "?")), be_age)

    # -- this is … -----------------------------------------------------------------------
    def this_is(dem: str, np: _NP, mood: str) -> tuple:
        pl = dem in ("these", "those")
        o_en = _np_en(np)
        if mood == "?":
            en = _en_out(["Are" if pl else "Is", dem, o_en], mood)
        elif mood == "+":
            en = _en_out(["That's" if dem == "that" else f"{dem} {'are' if pl else 'is'}",
                          o_en], mood)
        else:
            en = _en_out([dem, "aren't" if pl else "isn't", o_en], mood)
        o_fr = _np_fr(np)
        if mood == "+":
            fr_t = ["ce", "sont" if pl else "est"] + o_fr
        elif mood == "-":
            fr_t = ["ce", "ne", "sont" if pl else "est", "pas"] + o_fr
        else:
            fr_t = (["est-ce", "que", "ce", "sont"] if pl else ["est-ce"]) + o_fr
        zdem = {"this": "这", "that": "那", "these": "这些", "those": "那些"}[dem]
        zh = _zh_clause(zdem, None, "是" + _np_zh(np), "不是" + _np_zh(np, True),
                        "是" + _np_zh(np, True), mood)
        return out(en, lambda: fr_t, lambda: zh, mood)

    kin_nouns = [n for n in _persons(fra) if "kin" in n.tags or "role" in n.tags]
    sg_nps = (_possessed(fra, _nouns(_HAVEABLE + " book key " + _ANIMALS) + kin_nouns,
                         plural=False)
              + _a(_HAVEABLE + " book " + _ANIMALS, adjs=True))
    pl_nps = [_NP("poss", n, owner=o, pl=True) for n in _nouns(_HAVEABLE + " book key") +
              [n for n in kin_nouns if "pl" in n.tags] for o in _OWNERS if _owner_ok(o, n)]
    dem_np = [(d, np, m) for d, nps in (("this", sg_nps), ("that", sg_nps), ("these", pl_nps),
                                        ("those", pl_nps))
              for np in nps for m in _MOODS if m != "?" or np.owner not in ("I", "we")]
    add("this_is", 6, [dem_np], lambda c: this_is(*c))

    # -- have, want, like, eat -----------------------------------------------------------
    def do_obj(s: _Subj, verb: str, np: _NP, mood: str, zh_neg: str = "不", q_bare=True,
               fr_neg=True) -> tuple:
        """A present-tense transitive clause: He likes cats. / Il n'a pas de voiture. /
        你有车吗？"""
        np = _adapt(np, s)
        v = _V[verb]
        return out(_en_do(s, v, _np_en(np), mood),
                   lambda: _fr_clause(s, v.pres, _np_fr(np), _np_fr(np, fr_neg), mood),
                   lambda: _zh_clause(s.zh, None, v.zh + _np_zh(np),
                                      zh_neg + v.zh + _np_zh(np, True),
                                      v.zh + _np_zh(np, q_bare), mood), mood)

    child = " ".join(n.key for n in _persons(fra, "child"))
    have_obj = _combos(_a(_HAVEABLE + " " + _ANIMALS + " " + child, adjs=True), _MOODS) + \
        _combos(_num(_HAVEABLE + " " + _ANIMALS + " " + child, (2, 3)), ("+", "?"))
    add_people("have", 8, people, have_obj,
               lambda s, c: do_obj(s, "have", c[0], c[1], zh_neg="没"))

    want_obj = _combos(_a(_HAVEABLE + " " + _ANIMALS, adjs=True), _MOODS) + \
        _combos(_cont("tea coffee water milk juice beer wine", (1, 2)), ("+", "?")) + \
        _combos(_dem(_HAVEABLE + " book apple cake"), _MOODS)
    add_people("want", 5, people, want_obj,
               lambda s, c: do_obj(s, "want", c[0], c[1], q_bare=False), ban="I we")

    def like(s: _Subj, c: tuple) -> tuple:
        verb, obj, mood = c
        if isinstance(obj, tuple):  # an activity: I like swimming = j'aime nager
            v = _V[verb]
            return out(_en_do(s, v, obj[0], mood),
                       lambda: _fr_clause(s, v.pres, obj[1], obj[1], mood),
                       lambda: _zh_clause(s.zh, None, v.zh + obj[2], "不" + v.zh + obj[2],
                                          v.zh + obj[2], mood), mood)
        return do_obj(s, verb, obj, mood, fr_neg=False)

    gen = [_NP("gen", n) for n in _nouns(_ANIMALS + " " + _COUNT_FOOD + " " + _MASS_FOOD +
                                         " " + _DRINKS + " flower book movie music")]
    specific = _dem("car house hat jacket bag watch bike room photo lamp") + \
        _poss("car house hat jacket bag watch bike room photo")
    like_obj = _combos(["like"], gen + specific + _ACTIVITY_GERUNDS, _MOODS) + \
        _combos(["hate"], [_NP("gen", n) for n in _nouns("cat dog mouse tea coffee beer wine "
                                                         "fish meat cheese")]
                + _ACTIVITY_GERUNDS, _MOODS)
    add_people("like", 8, people, like_obj, like, ban="I we")

    diet = []
    for n in animal_nouns:
        food, drink = _DIET[n.key]
        subs = [s for s in animals if s.noun is n] + [_generic_subj(n)]
        objs = [("eat", f) for f in _nouns(food)] + [("drink", d) for d in _nouns(drink)]
        diet += [(s, vo, m) for s in subs for vo in objs for m in _MOODS]
    add("like_animal", 2, [diet],
        lambda c: do_obj(c[0], "like", _NP("gen", c[1][1]), c[2], fr_neg=False))
    add("eat_drink_animal", 2, [diet],
        lambda c: do_obj(c[0], c[1][0], _NP("part", c[1][1]), c[2]))
    eat_obj = _combos(["eat"], _nouns(_MASS_FOOD + " " + _COUNT_FOOD), _MOODS) + \
        _combos(["drink"], _nouns(_DRINKS), _MOODS)
    add_people("eat_drink", 6, people, eat_obj,
               lambda s, c: do_obj(s, c[0], _NP("part", c[1]), c[2]), ban="I we")

    # -- verb phrases with objects -------------------------------------------------------
    persons_obj = _names() + _kin(fra)
    things_lost = "phone wallet umbrella watch bag hat book pen"
    eat_a = _vp("eat", _a("apple banana sandwich orange pear egg"))
    eat_poss = _vp("eat", _poss("apple orange sandwich cake")) + _vp("eat", _poss("soup"), "喝")
    eat_dem = _vp("eat", _dem("apple cake sandwich"))
    eat_part = _vp("eat", [_NP("part", n) for n in _nouns(_MASS_FOOD)]) + \
        [_VP("eat", _NP("part", _N["soup"]), "喝")]
    drink_part = _vp("drink", [_NP("part", n) for n in _nouns(_DRINKS)])
    drink_poss = _vp("drink", _poss("tea coffee milk juice beer wine"))
    drink_cont = _vp("drink", _cont("tea coffee water milk juice beer wine"))
    read = _vp("read", _a("book letter") + [_F["newspaper"]] + _poss("book letter") +
               _dem("book letter"))
    write = _vp("write", _a("letter book"))
    watch = _vp("watch", [_F["tv"]] + _a("movie"))
    listen = _vp("listen", [_NP("part", _N["music"]), _F["radio"]])
    look = _vp("look", _poss(things_lost + " cat dog") + _poss("key", pl=True) + persons_obj)
    wait = _vp("wait", persons_obj + [_F["bus"]])
    make = _vp("make", [_F["dinner"], _F["lunch"], _F["breakfast"]])
    clean = _vp("clean", _poss("room") + [_F["kitchen"], _F["house"]])
    wash = _vp("wash", _poss("car") + [_F["thecar"], _F["dishes"]])
    call = _vp("call", persons_obj)
    help_ = _vp("help", persons_obj)
    buy_a = _vp("buy", _a(_HAVEABLE + " " + _ANIMALS, adjs=True))
    buy_num = _vp("buy", _num(_HAVEABLE + " book"))
    buy_dem = _vp("buy", _dem(_HAVEABLE + " book"))
    sell = _vp("sell", _poss("car house bike computer phone watch"))
    see = _vp("see", _a(_ANIMALS) + persons_obj) + _vp("see", _a("movie"), "看")
    find = _vp("find", _poss(things_lost + " cat dog") + _poss("key", pl=True))
    lose = _vp("lose", _poss(things_lost) + _poss("key", pl=True))
    open_ = _vp("open", [_F["door"], _F["window"]] + _poss("bag"))
    close = _vp("close", [_F["door"], _F["window"]])
    meet = _vp("meet", persons_obj)
    take = _vp("take", [_F["bus"], _F["train"]] + _a("taxi"))

    # -- progressive: he's reading a book, he's sleeping in the garden -------------------
    def prog(s: _Subj, c: tuple) -> tuple:
        vp, time, mood = c
        en = _en_be(s, vp.en_form(s, "ing") + " " + _t_en(time), mood)
        t = [_t_fr(time)]
        return out(en, lambda: _fr_clause(s, vp.v.pres, vp.fr_obj(s) + t,
                                          vp.fr_obj(s, True) + t, mood),
                   lambda: _zh_clause(s.zh, time, "在" + vp.zh_vp(s),
                                      "没在" + vp.zh_vp(s, bare=True),
                                      "在" + vp.zh_vp(s, bare=True), mood), mood)

    prog_vps = eat_a + eat_poss + eat_part + drink_part + drink_poss + drink_cont + read + \
        write + watch + listen + look + wait + make + clean + wash + call + help_
    prog_c = [(vp, t, m) for vp in prog_vps for t in (None, "now") for m in _MOODS
              if m != "-" or (vp.negatable and vp.np.det != "a")]
    add_vps("progressive", 10, people, prog_c, prog)

    def act(s: _Subj, c: tuple) -> tuple:
        a, place, time, mood = c
        en = _en_be(s, " ".join([a.en, place.en_at if place else "", _t_en(time)]), mood)
        after = [place.fr if place else "", _t_fr(time)]
        zh = ("在" + place.zh if place else "在") + a.zh
        return out(en, lambda: _fr_clause(s, a.fr, after, after, mood),
                   lambda: _zh_clause(s.zh, time, zh, "没" + zh, zh, mood), mood)

    act_c = [(a, p, t, m) for a in _ACTIVITIES if a.who == "person" for p in (None,) + tuple(
        a.places) for t in (None, "now") for m in _MOODS]
    add_people("activity", 6, people, act_c, act)
    animal_act = {"sleeping": _ANIMALS, "eating": _ANIMALS, "running": "dog cat horse rabbit"}
    animal_c = [(s, (a, p, t, m)) for a in _ACTIVITIES if a.who == "animal" for s in animals
                if s.noun.key in animal_act[a.en] for p in (None,) + tuple(a.places)
                for t in (None, "now") for m in _MOODS]
    add("activity_animal", 2, [animal_c], lambda sc: act(*sc))

    # -- past: he bought a car yesterday; she went to the park ---------------------------
    def past(s: _Subj, c: tuple) -> tuple:
        vp, time, mood = c
        v = vp.v
        en = _en_do(s, v, vp.en_obj(s) + " " + _t_en(time), mood, "past")
        t = [_t_fr(time)]
        return out(en, lambda: _fr_clause(s, _AVOIR, [v.pp] + vp.fr_obj(s) + t,
                                          [v.pp] + vp.fr_obj(s, True) + t, mood),
                   lambda: _zh_clause(s.zh, time, vp.zh_vp(s, "past"),
                                      "没" + vp.zh_vp(s, bare=True),
                                      vp.zh_vp(s, bare=True) + "了", mood), mood)

    def past_moods(vp: _VP) -> str:
        if vp.np.det == "num":
            return "+"
        moods = "+"
        if vp.np.det not in ("a", "cont") or vp.verb in ("buy", "write", "see", "take"):
            moods += "-"
        if vp.verb not in ("sell", "lose"):
            moods += "?"
        return moods

    past_vps = eat_a + eat_poss + eat_dem + drink_poss + drink_cont + buy_a + buy_num + \
        buy_dem + sell + read + write + see + find + lose + wash + open_ + close + clean + \
        make + call + help_ + take
    past_c = [(vp, t, m) for vp in past_vps for t in (None, "yesterday") for m in past_moods(vp)]
    add_vps("past", 12, people, past_c, past)

    def went(s: _Subj, c: tuple) -> tuple:
        place, time, mood = c
        if place is None:  # home
            v, en_to, fr_to = _V["gohome"], "home", "à la maison"
            zh = ("回家了", "没回家", "回家了")
        else:
            v, en_to, fr_to = _V["go"], place.en_to, place.fr
            zh = ("去了" + place.zh, "没去" + place.zh, "去" + place.zh + "了")
        en = _en_do(s, _V["go"], en_to + " " + _t_en(time), mood, "past")
        after = [_pp(v, s), fr_to, _t_fr(time)]
        return out(en, lambda: _fr_clause(s, _ETRE, after, after, mood),
                   lambda: _zh_clause(s.zh, time, *zh, mood), mood)

    dests = (None,) + tuple(_places("go"))
    add_people("past_go", 5, people, _combos(dests, (None, "yesterday"), _MOODS), went)

    def came(s: _Subj, c: tuple) -> tuple:
        time, mood = c
        en = _en_do(s, _V["come"], _t_en(time), mood, "past")
        after = [_pp(_V["come"], s), _t_fr(time)]
        return out(en, lambda: _fr_clause(s, _ETRE, after, after, mood),
                   lambda: _zh_clause(s.zh, time, "来了", "没来", "来了", mood), mood)

    add_people("past_come", 1, people, _combos((None, "yesterday"), _MOODS), came, ban="I we")

    # -- present of going and coming: I'm going to the park tomorrow ---------------------
    def going(s: _Subj, c: tuple) -> tuple:
        place, time, mood = c
        t = [_t_fr(time)]
        if place == "come":
            en_c, fr_v, fr_a, zh = "coming", _V["come"].pres, t, ("来", "不来", "来")
        elif place is None:
            en_c, fr_v, fr_a = "going home", _V["gohome"].pres, ["à la maison"] + t
            zh = ("回家", "不回家", "回家")
        else:
            en_c, fr_v, fr_a = "going " + place.en_to, _V["go"].pres, [place.fr] + t
            zh = ("去" + place.zh, "不去" + place.zh, "去" + place.zh)
        en = _en_be(s, en_c + " " + _t_en(time), mood)
        return out(en, lambda: _fr_clause(s, fr_v, fr_a, fr_a, mood),
                   lambda: _zh_clause(s.zh, time, *zh, mood), mood)

    going_c = _combos(dests, (None, "now", "today", "tomorrow"), _MOODS) + \
        _combos(["come"], ("today", "tomorrow"), _MOODS)
    add_people("going", 6, people, going_c, going)

    # -- want to, going to, can ----------------------------------------------------------
    intrans = [_VP("", en=en, fr=[fr], zh=zh) for en, fr, zh in [
        ("sleep", "dormir", "睡觉"), ("swim", "nager", "游泳"), ("dance", "danser", "跳舞"),
        ("sing", "chanter", "唱歌")]]
    go_vps = [_VP("", en="go home", fr=["rentrer", "à la maison"], zh="回家")] + \
        [_VP("", en="go " + p.en_to, fr=["aller", p.fr], zh="去" + p.zh) for p in _places("go")]
    play_vps = [_VP("", en="play " + en, fr=["jouer"] + fr, zh=zh) for en, fr, zh in _PLAYABLE]
    learn_vps = [_VP("", en="learn " + en, fr=["apprendre", "le", fr], zh="学" + zh)
                 for en, fr, zh in _LANGUAGES]
    live_vps = [_VP("", en="live " + p.en_at, fr=["habiter", p.fr], zh="住在" + p.zh)
                for p in _places("live")]
    read_some = _vp("read", _dem("book")) + [_VP("read", _F["newspaper"])]

    def want_to(s: _Subj, c: tuple) -> tuple:
        vp, time, mood = c
        en = _en_do(s, _V["want"], "to " + vp.en_form(s) + " " + _t_en(time), mood)
        t = [_t_fr(time)]
        return out(en, lambda: _fr_clause(s, _V["want"].pres, vp.fr_inf(s) + t,
                                          vp.fr_inf(s, True) + t, mood),
                   lambda: _zh_clause(s.zh, time, "想" + vp.zh_vp(s),
                                      "不想" + vp.zh_vp(s, bare=True), "想" + vp.zh_vp(s),
                                      mood), mood)

    want_vps = intrans + go_vps + play_vps + learn_vps + live_vps + eat_a + eat_part + \
        drink_part + buy_a + buy_dem + read_some + meet + call + watch + take
    want_c = [(vp, t, m) for vp in want_vps for t in (None, "now") for m in _MOODS
              if m != "-" or vp.negatable]
    add_vps("want_to", 8, people, want_c, want_to, ban="I we")

    def going_to(s: _Subj, c: tuple) -> tuple:
        vp, time, mood = c
        en = _en_be(s, "going to " + vp.en_form(s) + " " + _t_en(time), mood)
        t = [_t_fr(time)]
        return out(en, lambda: _fr_clause(s, _V["go"].pres, vp.fr_inf(s) + t, [], mood),
                   lambda: _zh_clause(s.zh, time, "要" + vp.zh_vp(s), "",
                                      "要" + vp.zh_vp(s, bare=True), mood), mood)

    going_vps = buy_a + buy_dem + sell + eat_a + eat_dem + read_some + write + call + meet + \
        watch + make + clean + wash + learn_vps + take
    add_vps("going_to", 5, people, _combos(going_vps, (None, "today", "tomorrow"), ("+", "?")),
               going_to)

    def can(s: _Subj, c: tuple) -> tuple:
        (en_sk, fr_sk, zh_sk), mood = c
        en = _en_out({"+": [s.en, "can"], "-": [s.en, "can't"], "?": ["Can", s.en]}[mood] +
                     [en_sk], mood)
        return out(en, lambda: _fr_clause(s, _V["can"].pres, fr_sk, fr_sk, mood),
                   lambda: _zh_clause(s.zh, None, "会" + zh_sk, "不会" + zh_sk, "会" + zh_sk, mood),
                   mood)

    add_people("can", 4, people, _combos(_SKILLS, _MOODS), can, ban="I we")

    # -- live, work, speak, study, play, know --------------------------------------------
    def simple(s: _Subj, verb: str, en_c: str, fr_c: Sequence[str], zh: tuple, mood: str):
        v = _V[verb]
        return out(_en_do(s, v, en_c, mood),
                   lambda: _fr_clause(s, v.pres, list(fr_c), list(fr_c), mood),
                   lambda: _zh_clause(s.zh, None, *zh, mood), mood)

    add_people("live", 3, people, _combos(_places("live"), _MOODS), lambda s, c: simple(
        s, "live", c[0].en_at, [c[0].fr], ("住在" + c[0].zh, "不住在" + c[0].zh, "住在" + c[0].zh),
        c[1]))
    add_people("work", 3, people, _combos(_places("work"), _MOODS),
               lambda s, c: simple(s, "work", c[0].en_at, [c[0].fr], (
                   "在" + c[0].zh + "工作", "不在" + c[0].zh + "工作", "在" + c[0].zh + "工作"),
                   c[1]))
    add_people("speak", 3, people, _combos(_LANGUAGES, _MOODS), lambda s, c: simple(
        s, "speak", c[0][0], [c[0][1]], ("会说" + c[0][2], "不会说" + c[0][2], "会说" + c[0][2]),
        c[1]), ban="I we")
    add_people("study", 2, people, _combos(_SUBJECTS_OF_STUDY, _MOODS), lambda s, c: simple(
        s, "study", c[0][0], c[0][1], ("学习" + c[0][2], "不学习" + c[0][2], "学习" + c[0][2]),
        c[1]), ban="I we")

    def play(s: _Subj, c: tuple) -> tuple:
        (en_x, fr_x, zh_x), prog_, time, mood = c
        if not prog_:
            return simple(s, "play", en_x, fr_x, (zh_x, "不" + zh_x, zh_x), mood)
        en = _en_be(s, "playing " + en_x + " " + _t_en(time), mood)
        after = list(fr_x) + [_t_fr(time)]
        return out(en, lambda: _fr_clause(s, _V["play"].pres, after, after, mood),
                   lambda: _zh_clause(s.zh, time, "在" + zh_x, "没在" + zh_x, "在" + zh_x, mood),
                   mood)

    add_people("play", 4, people, [(x, p, t, m) for x in _PLAYABLE for p, t in (
        (False, None), (True, None), (True, "now")) for m in _MOODS], play, ban="I we")

    def know(s: _Subj, c: tuple) -> tuple:
        vp, mood = c
        o = vp.zh_vp(s)[len(vp.v.zh):]
        return simple(s, "know", vp.en_obj(s), vp.fr_obj(s), ("认识" + o, "不认识" + o, "认识" + o),
                      mood)

    add_people("know", 4, people, _combos(_vp("know", persons_obj), _MOODS), know)

    # -- there is, weather, imperatives, exclamations ------------------------------------
    def there(c: tuple) -> tuple:
        (en_loc, fr_loc, zh_loc, _), np, mood = c
        o_en, pl = _np_en(np), np.det == "num"
        en = _en_out({"+": ["There are" if pl else "There's"], "-": ["There isn't"],
                      "?": ["Is there"]}[mood] + [o_en, en_loc], mood)
        fr_t = {"+": ["il", "y", "a"] + _np_fr(np), "-": ["il", "ne", "y", "a", "pas"] +
                _np_fr(np, True), "?": ["y", "a-t-il"] + _np_fr(np)}[mood] + fr_loc
        return out(en, lambda: fr_t,
                   lambda: _zh_clause(zh_loc, None, "有" + _np_zh(np), "没有" + _np_zh(np, True),
                                      "有" + _np_zh(np, True), mood), mood)

    there_c = []
    for loc in _LOCATIONS:
        for n in _nouns(" ".join(sorted(loc[3]))):
            there_c += [(loc, _NP("a", n), m) for m in _MOODS]
            there_c += [(loc, _NP("a", n, adj=a), "+") for a in _ATTR_ADJ if n.key in a.nouns]
            there_c += [(loc, _NP("num", n, k=k), "+") for k in (2, 3)]
    add("there_is", 6, [there_c], there)

    it = _Subj("it", "it", "it's", "is", True, ["il"], "il", 2, "m", False, "", "it")

    def weather(c: tuple) -> tuple:
        (en_w, fr_w, zh_pos, zh_neg, zh_q), time, mood = c
        if time == "tomorrow":  # it's going to be cold tomorrow = il va faire froid demain
            en = _en_be(it, f"going to be {en_w} tomorrow", mood)
            fr_t = _fr_clause(it, _V["go"].pres, ["faire", fr_w, "demain"], [], mood)
            if en_w == "nice":
                zh = _zh_clause("明天", None, "天气会很好", "", "天气会好", mood)
            else:
                zh = _zh_clause("明天", None, "会" + zh_pos, "", "会" + zh_q, mood)
            return out(en, lambda: fr_t, lambda: zh, mood)
        en = _en_be(it, en_w + " " + _t_en(time), mood)
        after = [fr_w, _t_fr(time)]
        return out(en, lambda: _fr_clause(it, ["fait"] * 6, after, after, mood),
                   lambda: _zh_clause(_t_zh(time), None, zh_pos, zh_neg, zh_q, mood), mood)

    def rain(c: tuple) -> tuple:
        time, mood = c
        en = _en_be(it, "raining " + _t_en(time), mood)
        after = [_t_fr(time)]
        zh = {"now": ("在下雨", "没下雨", "在下雨"), "today": ("下雨了", "没下雨", "下雨了")}[time]
        return out(en, lambda: _fr_clause(it, ["pleut"] * 6, after, after, mood),
                   lambda: _zh_clause(_t_zh(time), None, *zh, mood), mood)

    weathers = [("cold", "froid", "很冷", "不冷", "冷"), ("hot", "chaud", "很热", "不热", "热"),
                ("nice", "beau", "天气很好", "天气不好", "天气好")]
    weather_c = [(w, t, m) for w in weathers for t in ("today", "now") for m in _MOODS
                 if not (w[0] == "nice" and t == "now")]
    weather_c += [(w, "tomorrow", m) for w in weathers for m in ("+", "?")]
    add("weather", 1, [weather_c], weather)
    add("rain", 0.3, [_combos(("now", "today"), _MOODS)], rain)

    def imperative(c: tuple) -> tuple:
        vp, form = c
        en_vp = vp.en_form(None)
        if vp.np is None:
            fr_vp = ["va" if vp.fr[0] == "aller" else vp.fr[0]] + list(vp.fr[1:])
        else:
            fr_vp = [vp.v.imp] + vp.fr_obj(None)
        if form == "!":
            return out(_en_out(["don't", en_vp], "!"), lambda: ["ne", fr_vp[0], "pas"] + fr_vp[1:],
                       lambda: _zh_out("别" + vp.zh_vp(None), "!"), "!")
        if form == "please":
            en = _en_out(["please", en_vp], "+")
            return (en, _cap(_fr_join(fr_vp)) + ", s'il te plaît.") if fra else \
                (en, _zh_out("请" + vp.zh_vp(None, "imp"), "+"))
        return out(_en_out([en_vp], "+"), lambda: fr_vp,
                   lambda: _zh_out(vp.zh_vp(None, "imp"), "+"), "+")

    def your(keys: str) -> list[_NP]:
        return [_NP("poss", n, owner="you") for n in _nouns(keys)]

    imp_c = []
    for vps, forms in [
        (_vp("open", [_F["door"], _F["window"]]), "+ please !"),
        (_vp("close", [_F["door"], _F["window"]]), "+ please"),
        (_vp("read", _dem("book letter", "this")), "+ please"),
        (_vp("read", _poss("letter")), "!"),
        (_vp("buy", _dem("car book hat", "this")), "+"),
        (_vp("buy", _dem("car hat house", "that")), "!"),
        (_vp("eat", _dem("apple cake sandwich", "this")), "+"),
        (_vp("eat", _poss("cake apple orange sandwich")), "!"),
        (_vp("drink", _dem("tea coffee milk", "this")), "+"),
        (_vp("drink", _poss("coffee tea milk beer")), "!"),
        (_vp("call", _names() + your("mother father friend")), "+ please !"),
        (_vp("help", _names() + your("mother father friend")), "+ please"),
        (_vp("wait", _names() + your("friend mother")), "+ please !"),
        (_vp("clean", your("room") + [_F["kitchen"]]), "+ please"),
        (_vp("wash", [_F["dishes"], _F["thecar"]] + your("car")), "+ please"),
        (_vp("make", [_F["dinner"], _F["breakfast"]]), "+ please"),
        (_vp("sell", your("car house bike")), "!"),
        ([vp for vp in go_vps if vp.en in ("go to school", "go to the park", "go to the library",
                                           "go home")], "+ !"),
    ]:
        imp_c += [(vp, f) for vp in vps for f in forms.split()]
    add("imperative", 3, [imp_c], imperative)

    def what(np: _NP) -> tuple:
        stem = {"beautiful": "漂亮", "big": "大", "small": "小", "oldthing": "旧", "cute": "可爱",
                "expensive": "贵"}[np.adj.key]
        return out(_en_out([_np_en(np)], "!"), lambda: _np_fr(np),
                   lambda: _zh_out("好" + stem + "的" + np.noun.zh + "啊", "!"), "!")

    expensive = _aa("expensive", "expensive", "cher chère chers chères", "post", "",
                    "car bike house phone computer watch bag hat jacket")
    what_c = [_NP("what", n, adj=a, pl=pl) for a in [_ATTR[k] for k in (
        "beautiful", "big", "small", "oldthing", "cute")] + [expensive]
        for n in _nouns(" ".join(sorted(a.nouns))) for pl in (False, True)]
    add("what", 1, [what_c], what)

    return T


# ---------------------------------------------------------------------------------------------
# sampling
# ---------------------------------------------------------------------------------------------

def _handwritten_english(pair: str) -> frozenset[str]:
    """The English sentences of the hand-written corpus of ``pair`` (never generated)."""
    path = Path(__file__).with_name("corpora") / _HANDWRITTEN[pair]
    if not path.is_file():
        return frozenset()
    return frozenset(line.split("\t", 1)[0] for line in path.read_text(encoding="utf-8")
                     .splitlines() if "\t" in line)


class _Grammar:
    def __init__(self, pair: str):
        self.pair = pair
        self.templates = _build(pair)
        self.excluded = _handwritten_english(pair)
        self.total = sum(t.valid for t in self.templates)
        #: how many pairs can always be returned: every distinct sentence of the grammar,
        #: less (at most) those of the hand-written corpus
        self.capacity = self.total - len(self.excluded)

    def sample(self, num: int, rng: random.Random) -> list[tuple[str, str]]:
        templates = self.templates
        nt = len(templates)
        weights = [t.weight for t in templates]
        # how many pairs each template gives: drawn by weight, capped at its size
        quota = [0] * nt
        for i in rng.choices(range(nt), weights=weights, k=num):
            quota[i] += 1
        overflow = 0
        for i, t in enumerate(templates):
            if quota[i] > t.valid:
                overflow += quota[i] - t.valid
                quota[i] = t.valid
        tried: list[set[int]] = [set() for _ in templates]
        seen = set(self.excluded)
        pairs: list[tuple[str, str]] = []
        missing = overflow
        for i, t in enumerate(templates):
            if not quota[i]:
                continue
            idx = rng.sample(range(t.size), min(t.size, quota[i]))
            tried[i].update(idx)
            for j in idx:
                p = t[j]
                if p is None or p[0] in seen:
                    missing += 1
                    continue
                seen.add(p[0])
                pairs.append(p)
        # make up for overflow, clashes and hand-written sentences from templates with room
        while missing:
            room = [i for i, t in enumerate(templates) if len(tried[i]) < t.size]
            if not room:
                raise RuntimeError("the grammar ran out of sentences")  # capacity forbids it
            for i in rng.choices(room, weights=[weights[r] for r in room], k=missing):
                t, done = templates[i], tried[i]
                if len(done) == t.size:
                    continue
                if len(done) * 2 < t.size:
                    j = rng.randrange(t.size)
                    while j in done:
                        j = rng.randrange(t.size)
                else:
                    j = rng.choice([k for k in range(t.size) if k not in done])
                done.add(j)
                p = t[j]
                if p is not None and p[0] not in seen:
                    seen.add(p[0])
                    pairs.append(p)
                    missing -= 1
        rng.shuffle(pairs)
        return pairs


@cache
def _grammar(pair: str) -> _Grammar:
    return _Grammar(pair)


def generate_pairs(pair: str, num_pairs: int, seed: int = 0) -> list[tuple[str, str]]:
    """``num_pairs`` distinct sentence pairs of the project's bilingual grammar.

    Args:
        pair: ``"fra-eng"`` (English, French) or ``"cmn-eng"`` (English, Simplified Chinese).
        num_pairs: how many pairs, at least 1 and at most the number of distinct English
            sentences the grammar makes (the error message says how many).
        seed: the seed of the ``random.Random`` that picks them; the same arguments always
            give the same list.

    Returns:
        A list of ``(english, translation)`` tuples of raw sentences in the style of
        Tatoeba's files (``("He's calm.", "Il est calme.")``, ``("I like cats.",
        "我喜欢猫。")``): no two share their English sentence, none is an English sentence
        of the hand-written corpus in ``d2lmini/corpora/``, and each English sentence always
        has the same translation. The order is random; the patterns are mixed by fixed
        weights (statements, negations and questions of some thirty kinds).

    Raises:
        TypeError: ``pair`` is not a str, or ``num_pairs`` or ``seed`` is not an int.
        ValueError: an unknown ``pair``, or ``num_pairs`` out of range.
    """
    if not isinstance(pair, str):
        raise TypeError(f"pair must be a str, one of {PAIRS}; got {type(pair).__name__}")
    if pair not in PAIRS:
        raise ValueError(f"pair must be one of {PAIRS}; got {pair!r}")
    if isinstance(num_pairs, bool) or not isinstance(num_pairs, int):
        raise TypeError(f"num_pairs must be an int; got {type(num_pairs).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int; got {type(seed).__name__}")
    if num_pairs <= 0:
        raise ValueError(f"num_pairs must be positive; got {num_pairs}")
    grammar = _grammar(pair)
    if num_pairs > grammar.capacity:
        raise ValueError(
            f"num_pairs must be at most {grammar.capacity:,}: the {pair} grammar makes "
            f"{grammar.total:,} distinct English sentences and leaves out the "
            f"{len(grammar.excluded)} of the hand-written corpus; got {num_pairs:,}")
    return grammar.sample(num_pairs, random.Random(seed))
