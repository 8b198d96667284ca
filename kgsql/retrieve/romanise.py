"""How an English question may write a Chinese cell value: its pinyin, with place-name suffixes in English.

A spatial database of Chinese places stores ``东风路``, ``北京市``, ``岳阳东`` and
``阿克苏/温宿``; the questions say "Dongfeng Road", "Beijing", "Yueyang East" and
"Wensu Airport" (issue 29: English questions against Chinese cell values). The
value index searches these forms beside the stored text, so the hint can name
the exact stored value. A form is the pinyin of the name written as one word
(English writes "Dongfeng", not "Dong Feng"), with the generic suffixes a place
name ends in (road, city, district, east...) said in English, and once more
without them: "Beijing" names ``北京市``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

__all__ = ["has_cjk", "romanised_forms"]

_CJK: Final = re.compile(r"[\u3400-\u9fff]")
_PART_SPLIT: Final = re.compile(r"[/、,，;；()（）]")

#: Generic place-name endings and how English says them, longest first (tried repeatedly from the end).
SUFFIXES: Final[tuple[tuple[str, str], ...]] = (
    ("地铁站", "station"), ("火车站", "station"), ("汽车站", "station"), ("机场", "airport"), ("大道", "avenue"),
    ("公园", "park"), ("大学", "university"), ("广场", "square"), ("自治州", "prefecture"), ("自治区", "region"),
    ("站", "station"), ("路", "road"), ("街", "street"), ("桥", "bridge"), ("市", "city"), ("区", "district"),
    ("县", "county"), ("省", "province"), ("镇", "town"), ("村", "village"), ("湖", "lake"), ("江", "river"),
    ("河", "river"), ("山", "mountain"), ("寺", "temple"), ("港", "port"),
    ("东", "east"), ("西", "west"), ("南", "south"), ("北", "north"),
)


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _pinyin(text: str) -> str:
    """The pinyin of ``text`` as one lower-case word (``东风`` -> ``dongfeng``); other characters kept."""
    from pypinyin import lazy_pinyin

    return "".join(lazy_pinyin(text)).lower()


def _split_suffixes(name: str) -> tuple[str, list[str]]:
    """(the core, the English of the generic endings stripped from it, in reading order); the core keeps
    at least two characters, so ``东湖`` stays a name."""
    english: list[str] = []
    while True:
        for chinese, word in SUFFIXES:
            if name.endswith(chinese) and len(name) - len(chinese) >= 2:
                name = name[: -len(chinese)]
                english.insert(0, word)
                break
        else:
            return name, english


@lru_cache(maxsize=65536)
def romanised_forms(value: str) -> tuple[tuple[str, bool], ...]:
    """Ways an English text may write ``value`` (none when it has no Chinese characters), most specific
    first, each with whether it keeps every ending: ``岳阳东站`` -> ``(("yueyang east station", True),
    ("yueyang east", False), ("yueyang", False))``."""
    if not has_cjk(value):
        return ()
    forms: dict[str, bool] = {}
    for part in _PART_SPLIT.split(value):
        part = part.strip()
        if not has_cjk(part):
            continue
        core, english = _split_suffixes(part)
        name = _pinyin(core)
        for keep in range(len(english), -1, -1):
            form = " ".join([name, *english[:keep]])
            if len(form) >= 3:
                forms.setdefault(form, keep == len(english))
    return tuple(forms.items())
