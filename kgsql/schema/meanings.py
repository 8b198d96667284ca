"""What a column's values mean, read out of its documentation's free text.

Documentation writers (BIRD's ``value_description``, ``ingest --descriptions``,
a profile's ``value_explanation``) say the same few things in many spellings:

* codes and what they stand for: ``0: no, 1: yes``, ``1 = The school is a
  charter``, ``• Closed: It means that the event is closed``, ``+: positive``;
* the closed list of values: ``Closed / Open/ Planning``, ``true/ false``,
  ``"black", "borderless", "gold"``;
* the unit: ``the unit is dollar``, ``The unit of height is centimeter``,
  ``unit：month``;
* the values that mean "not known": ``If the weight_kg is NULL or 0, it means
  the weight of the superhero is missing``;
* how a date or time is written: ``e.g. 2020-03-10T12:00:00``, ``YYYY-MM-DD``.

:func:`parse_value_meaning` turns the text into a :class:`ValueMeaning`, which
ingest stores on the ``Column`` node beside the text, the schema prompt
renders next to the column (:meth:`ValueMeaning.summary`) and the hints stage
matches against a question's words. The parser is deliberately conservative:
prose that only resembles a code list yields nothing, because a wrong code in
the prompt misleads more than a missing one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["ValueMeaning", "parse_value_meaning"]


@dataclass(frozen=True)
class ValueMeaning:
    """Structured knowledge of one column's values (every field empty = nothing found)."""

    codes: tuple[tuple[str, str], ...] = ()  # (stored code, what it stands for)
    values: tuple[str, ...] = ()             # the documented closed list of values, when no meanings are given
    unit: str = ""
    missing: tuple[str, ...] = ()            # stored values that mean "not known" (NULL, 0, '')
    format: str = ""                         # an example or pattern of how dates/times are written

    def __bool__(self) -> bool:
        return bool(self.codes or self.values or self.unit or self.missing or self.format)

    def summary(self, *, meaning_chars: int = 40, with_values: bool = True) -> str:
        """One line for the schema prompt: ``unit: dollar; NULL or 0 = missing; 1 = yes, 0 = no``
        (``with_values=False``: without the closed value list, when the data's own values are shown)."""
        parts = []
        if self.unit:
            parts.append(f"unit: {self.unit}")
        if self.missing:
            parts.append(f"{' or '.join(self.missing)} = missing")
        if self.codes:
            parts.append(", ".join(f"{_quote(code)} = {_clip(meaning, meaning_chars)}" for code, meaning in self.codes))
        elif self.values and with_values:
            parts.append("values: " + ", ".join(_quote(v) for v in self.values))
        if self.format:
            parts.append(f"format: {self.format}")
        return "; ".join(parts)


def _quote(code: str) -> str:
    """A code as SQL would write it: numbers bare, anything else in single quotes."""
    if re.fullmatch(r"-?\d+(\.\d+)?", code):
        return code
    return "'" + code.replace("'", "''") + "'"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3].rsplit(" ", 1)[0] + "..."


# --------------------------------------------------------------------------- clean-up

#: Labels writers put before the knowledge itself; they carry none.
_LABELS = re.compile(
    r"\b(commonsense (evidence|reasoning)|values are as follows|the field is coded as follows|"
    r"coded as follows|value description)\s*[:：]?",
    re.I,
)
#: Bullets as they survive the files' encodings (•, ·, the cp1252 0x95 read as latin-1, U+FFFD).
_BULLETS = re.compile(r"[\u2022\u00b7\u0095\ufffd\u25cf\u25aa]|Â|ï¿½")


def _lines(text: str) -> list[str]:
    """The text's items: one per line or bullet, labels and spacing removed."""
    text = _LABELS.sub("\n", text.replace("\xa0", " "))
    text = _BULLETS.sub("\n", text)
    return [" ".join(line.split()) for line in re.split(r"[\r\n]+", text) if line.strip()]


# --------------------------------------------------------------------------- the parts

_UNIT = (
    re.compile(r"\bthe unit(?: of [\w ]{1,30}?)? is (?:in )?([a-z][\w /%$.-]{0,24}?)(?=[.,;(]|\s+commonsense|$)", re.I),
    re.compile(r"\bunits?\s*[:：]\s*([a-z%$][\w /%$.-]{0,24}?)(?=[.,;(]|$)", re.I),
)
_MISSING_WORDS = r"(?:null|0|''|\"\"|empty|none|n/a|-1)"
_MISSING = re.compile(
    rf"\b(?:is|are|equals?|=)\s+({_MISSING_WORDS}(?:\s*(?:or|,|/)\s*{_MISSING_WORDS})*)\b[^.]{{0,80}}?"
    r"\b(missing|unknown|not (?:known|available|recorded|given))",
    re.I,
)
_DATE_EXAMPLE = re.compile(
    r"\b(\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?|"
    r"\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?|"
    r"Y{2,4}[-/]?M{1,2}[-/]?D{1,2}(?:[T ]?h{1,2}:?m{1,2}(?::?s{1,2})?)?)",
    re.I,
)
#: "code: meaning" at the start of an item; the code is short (a number, a letter code, a sign, one to
#: three words), the separator a colon, an equals sign or a spaced dash.
_CODE_ITEM = re.compile(
    r"^\s*['\"]?(?P<code>[+\-*]|-?\d+(?:\.\d+)?|[A-Za-z][\w.&'/-]*(?: [A-Za-z][\w.&'/-]*){0,2})['\"]?"
    r"\s*(?:[:：=]|\s[-–]\s)\s*(?P<meaning>\S.*)$"
)
#: Several codes on one line: "0: disallow 1: allow" (short codes only, so prose is not split).
_INLINE_CODE = re.compile(r"(?:^|(?<=\s))(?P<code>[+\-*]|-?\d{1,3}|[A-Za-z]{1,2})\s*[:：=]\s+")
#: Words that make a "label: text" line prose rather than a code: "Note: ...", "Normal range: ...".
_NOT_CODES = {"note", "normal range", "example", "e.g", "eg", "i.e", "ie", "unit", "units", "format",
              "commonsense", "evidence", "reference", "references", "see", "warning", "remark"}
_VALUE_ITEM = re.compile(r"^['\"]?([A-Za-z0-9][\w .&+-]{0,24}?)['\"]?$")


def _unit(items: list[str]) -> str:
    for item in items:
        for pattern in _UNIT:
            match = pattern.search(item)
            if match:
                return match.group(1).strip(" .").lower()
    return ""


def _missing(text: str) -> tuple[str, ...]:
    match = _MISSING.search(text)
    if not match:
        return ()
    words = re.split(r"\s*(?:or|,|/)\s*", match.group(1))
    return tuple(dict.fromkeys("NULL" if w.lower() == "null" else w for w in words if w))


def _format(text: str, data_format: str) -> str:
    for source in (text, data_format):
        match = _DATE_EXAMPLE.search(source or "")
        if match:
            return match.group(1)
    return ""


def _codes(items: list[str]) -> tuple[tuple[str, str], ...]:
    """Code/meaning pairs, when at least two items read as ``code: meaning``; otherwise none."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        inline = list(_INLINE_CODE.finditer(item))
        if len(inline) >= 2 and inline[0].start() == 0:
            for this, following in zip(inline, inline[1:] + [None]):
                meaning = item[this.end(): following.start() if following else len(item)].strip(" ,;")
                if re.search(r"[A-Za-z]", meaning):
                    pairs.append((this.group("code"), meaning))
            continue
        match = _CODE_ITEM.match(item)
        if not match:
            continue
        code, meaning = match.group("code").strip(), match.group("meaning").strip(" ,;.")
        if code.lower().rstrip(".") in _NOT_CODES or not re.search(r"[A-Za-z]", meaning):
            continue
        if _DATE_EXAMPLE.fullmatch(f"{code}:{meaning}".replace(" ", "")):
            continue  # 12:00 is a time, not code 12
        pairs.append((code, meaning))
    distinct = dict(pairs)
    return tuple(distinct.items()) if len(distinct) >= 2 else ()


def _values(items: list[str]) -> tuple[str, ...]:
    """A closed list written on one line: ``Closed / Open/ Planning``, ``"black", "gold"``, ``true/ false``."""
    if not items:
        return ()
    first = items[0]
    if "..." in first or "e.g" in first.lower():
        return ()
    parts = [p.strip() for p in re.split(r"\s*[/,]\s*|\s+or\s+", first) if p.strip()]
    if len(parts) < 2 or len(parts) > 12:
        return ()
    values = []
    for part in parts:
        match = _VALUE_ITEM.match(part)
        if not match or len(match.group(1).split()) > 2:
            return ()
        values.append(match.group(1).strip())
    if values[0].split()[0].lower() in {"in", "the", "a", "an", "if", "when", "only", "each"}:
        return ()  # "in minutes / seconds" is prose about units, not a list of values
    return tuple(dict.fromkeys(values))


@lru_cache(maxsize=4096)
def parse_value_meaning(value_description: str, data_format: str = "") -> ValueMeaning:
    """The structured part of ``value_description`` (and a date/time ``data_format``); empty if none.

    Cached: ``Column.value_meaning`` parses on every read (the text stays the one source), and the
    schema renderer and the hints read it for every column of every question."""
    text = value_description or ""
    if not text.strip() and not (data_format or "").strip():
        return ValueMeaning()
    items = _lines(text)
    joined = " ".join(items)
    date_format = _format(joined, data_format)
    codes = () if date_format and len(items) <= 1 else _codes(items)
    values = () if codes or date_format else _values(items)
    return ValueMeaning(codes=codes, values=values, unit=_unit(items), missing=_missing(joined),
                        format=date_format)
