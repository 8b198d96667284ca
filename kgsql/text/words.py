"""Turning identifiers and schema knowledge into words a text encoder understands.

Schema names are written for machines (``NumGE1500``, ``cust_addr``,
``CDSCode``); encoders were trained on prose. Splitting and expanding names is
the cheapest way to make ``"number of customers"`` meet ``num_cust``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

#: Common schema abbreviations -> words. Kept small and unambiguous; the
#: original token stays in the text too, so a wrong expansion costs little.
ABBREVIATIONS: dict[str, str] = {
    "num": "number", "no": "number", "nbr": "number", "cnt": "count", "qty": "quantity",
    "amt": "amount", "avg": "average", "max": "maximum", "min": "minimum", "pct": "percent",
    "perc": "percent", "id": "id", "desc": "description", "addr": "address", "dept": "department",
    "emp": "employee", "mgr": "manager", "dob": "date of birth", "yr": "year", "yrs": "years",
    "dt": "date", "tel": "telephone", "info": "information", "org": "organization",
    "std": "standard", "stu": "student", "prof": "professor", "lat": "latitude",
    "lng": "longitude", "lon": "longitude", "pop": "population", "temp": "temperature",
    "acct": "account", "trans": "transaction", "cust": "customer", "prod": "product",
    "ref": "reference", "cat": "category", "loc": "location", "st": "street",
    "fname": "first name", "lname": "last name", "dname": "department name",
    "sname": "school name", "cname": "name", "gnp": "gross national product",
    "sq": "square", "km": "kilometers", "dist": "distance", "stat": "status",
    "char": "character", "val": "value", "lang": "language", "govt": "government",
    "hs": "high school", "k12": "k-12",
}

_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")  # fooBar -> foo Bar
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")  # CDSCode -> CDS Code
_DIGITS = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


def split_identifier(name: str) -> list[str]:
    """Split a schema identifier into lower-case words.

    Handles snake_case, camelCase, runs of capitals (``CDSCode`` -> cds code)
    and letter/digit boundaries (``NumGE1500`` -> num ge 1500).
    """
    return list(_split_identifier(name))


@lru_cache(maxsize=1 << 16)  # a wide schema repeats its names: re-indexing 30,000 columns split them again
def _split_identifier(name: str) -> tuple[str, ...]:
    text = _CAMEL_2.sub(r"\1 \2", _CAMEL_1.sub(r"\1 \2", name))
    text = _DIGITS.sub(" ", text)
    return tuple(w.lower() for w in _NON_WORD.split(text) if w)


@lru_cache(maxsize=1 << 16)
def identifier_words(name: str) -> str:
    """Readable form of an identifier, with known abbreviations expanded in brackets."""
    words = split_identifier(name)
    out: list[str] = []
    for w in words:
        out.append(w)
        exp = ABBREVIATIONS.get(w)
        if exp and exp != w:
            out.append(f"({exp})")
    return " ".join(out)


_WORD = re.compile(r"[0-9A-Za-z\u00C0-\uFFFF]+")


def stem(word: str) -> str:
    """Crude plural folding, enough to match ``singers`` with ``singer``."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def singular_forms(word: str) -> set[str]:
    """The word and what it is with a plural ending taken off (``courses``: courses, course, cours): two
    words are the same word in another number when their forms meet (:func:`same_words`)."""
    w = word.lower()
    forms = {w}
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        forms.add(w[:-1])
    if len(w) > 3 and w.endswith("es"):
        forms.add(w[:-2])
    if len(w) > 4 and w.endswith("ies"):
        forms.add(w[:-3] + "y")
    return forms


def same_words(a: str, b: str) -> bool:
    """Do two identifiers say the same words up to number and case (``city`` / ``Cities``,
    ``river_city`` / ``RiverCities``)?"""
    wa, wb = split_identifier(a), split_identifier(b)
    return len(wa) == len(wb) > 0 and all(singular_forms(x) & singular_forms(y) for x, y in zip(wa, wb))


def name_spans(forms: Sequence[set[str]], name: str) -> list[range]:
    """Where a text says the identifier ``name``: the positions of each place its words come one after
    another, each in any number. ``forms``: the text's :func:`words`, each as its :func:`singular_forms`
    (made once by the caller, who asks about many names)."""
    parts = [singular_forms(p) for p in split_identifier(name)]
    n = len(parts)
    if not n:
        return []
    return [range(i, i + n) for i in range(len(forms) - n + 1) if all(parts[j] & forms[i + j] for j in range(n))]


def names_said(text: str, names: Iterable[str]) -> list[str]:
    """The identifiers among ``names`` that ``text`` says: each one's words, one after another, each in any
    number ("the name of the event" says ``event``, "the tv series" ``TV_series``; "the car maker's full
    name" does not say ``car_names``: scattered words name nothing)."""
    forms = [singular_forms(w) for w in words(text)]
    return [name for name in names if name_spans(forms, name)]


def says_name(text: str, name: str) -> bool:
    """Does ``text`` say the identifier ``name`` (:func:`names_said`)?"""
    return bool(names_said(text, [name]))


_DECIMAL = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def is_number(text: str) -> bool:
    """Does ``text`` read as a decimal number (``12``, ``-3.5``, `` 7 ``, ``1e3``)? Not ``NaN``, ``inf`` or
    ``1_000``, which Python's ``float`` takes and a database stores as words."""
    return bool(_DECIMAL.fullmatch(str(text).strip()))


def words(text: str) -> list[str]:
    """Lower-case word tokens of free text (letters/digits, CJK kept)."""
    return [w.lower() for w in _WORD.findall(text)]


def written_words(text: str) -> list[tuple[str, int, int]]:
    """The word tokens of :func:`words` as written (case kept), each with its start and end offset."""
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


#: Words that carry no schema meaning in a question or a column document.
#: Used to drop query/document tokens before MaxSim and by the lexical
#: matchers; template words of the column document are here too.
STOPWORDS: frozenset[str] = frozenset(
    """a an the of in on at to for from by with and or not no is are was were be been being
    it its this that these those there their them they he she his her him we our you your
    i me my what which who whom whose when where why how all any each every some many much
    more most less least than then as do does did done have has had having can could will
    would should shall may might must also just only very so such same other into out over
    under about above below between through during before after up down off again further
    once here both few own too s t if but because until while whether per
    show list give find tell return display get please provide let us know
    column named table about
    """.split()
)
