"""Names a question says that a database stores: a tie-break the routing's word signals cannot make.

"What is the zip code for Port Chelsea?" fits bike_1's words (zip codes) better than
student_transcripts_tracking's, but only the latter stores 'Port Chelsea'. The routing documents hold the
few values the graph samples per column; :func:`database_values` reads a database's own short text values
once, when its routing entry is built (cached with it), and :class:`NamedValues` says which databases store a
name the question says (:func:`named_spans`): a run of capitalised words (not one opening a sentence), a
code in capitals, or a quoted text, but not one the question asks to be *contained* ("the substring 'West'").
A run stored whole is looked up whole; else every word of it must be a value of one database ("Timmothy
Ward": a first and a last name).

Among the first :data:`WITHIN` databases of the fused ranking, when the first stores no such name and a
later one does, the later one answers; a name more than :data:`MAX_HOLDERS` databases store (``Asia``,
``Male``) says nothing, and a first choice whose values could not be read is never passed over for them.
Among Spider's 163 databases with a query log it mended 10 of the 972 dev questions' first choices and broke
none (docs/eval.md, session 33).
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Sequence

from kgsql.route.documents import GENERIC_NAMES, phrase
from kgsql.schema.model import DatabaseSchema
from kgsql.text.words import STOPWORDS, written_words

#: How far down the fused ranking a stored name may reach, and how many databases may store it.
WITHIN = 3
MAX_HOLDERS = 3
#: Per column, the most frequent short text values read (the value index keeps 1,000: "Kabul" is past
#: world_1's first 1,000 cities); longer texts are descriptions, not names.
PER_COLUMN = 5000
MAX_CHARS = 40
MAX_WORDS = 4
#: At most this many values of one database are kept (its routing entry is read on every router build).
MAX_VALUES = 100_000
_QUOTED = re.compile(r"(?<!\w)(['\"])([^'\"]+)\1(?!\w)")
#: Typographic quotes and apostrophes written as plain ones ("Kyle’s", “The Godfather”).
_PLAIN_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
#: What may stand between two words of one name ("Port Chelsea", "Rolls-Royce", "AT&T"): not a comma.
_WITHIN_NAME = re.compile(r"[ \t\-&]*")
_SENTENCE_END = re.compile(r"[.?!]\W*$")
#: Words before a text that ask for part of a value, not a stored one ("containing the substring 'West'").
_PARTIAL = re.compile(r"\b(substrings?|contains?|containing|includes?|including|starts?|starting|begins?|"
                      r"beginning|ends?|ending|like|pattern|prefix|suffix)\b(?:\W+\w+){0,2}\W*$", re.I)
_LETTER = re.compile(r"[^\W\d_]")


def database_values(schema: DatabaseSchema) -> list[str] | None:
    """The folded short text values ``schema``'s database stores (with a letter, at most :data:`MAX_WORDS`
    words); None when its file or server cannot be read from here (it then routes by its words alone, and is
    not passed over for a name it may store). A server is asked once first, so one that is down costs one
    connection attempt, not one per column."""
    if not schema.path:
        return None
    from kgsql.retrieve.values import ValueLimits, extract_values

    limits = ValueLimits(per_column=PER_COLUMN, max_chars=MAX_CHARS, max_values=MAX_VALUES)
    try:
        rows = extract_values(schema.path, schema, limits)  # a server that is down: one attempt, then an error
    except Exception:  # noqa: BLE001 - a database this machine cannot open routes by its words
        return None
    folded = {phrase(v) for _t, _c, v in rows if _LETTER.search(v)}
    return sorted(p for p in folded if p and len(p.split()) <= MAX_WORDS)


def named_spans(question: str) -> list[str]:
    """The names ``question`` says, as written (see module doc). A word opening a sentence is capitalised by
    the sentence, so it is a name only in capitals ("ATO"); a comma ends a name ("Germany, France")."""
    question = question.translate(_PLAIN_QUOTES)
    runs: list[list[tuple[str, int, int]]] = [[]]
    end = 0
    for k, (w, start, stop) in enumerate(written_words(question)):
        opens = k == 0 or _SENTENCE_END.search(question[end:start]) is not None
        if runs[-1] and not _WITHIN_NAME.fullmatch(question[end:start]):
            runs.append([])
        if (w[0].isupper() and not opens) or (len(w) > 1 and w.isupper()):
            runs[-1].append((w, start, stop))
        elif runs[-1]:
            runs.append([])
        end = stop
    spans = [(" ".join(w for w, _, _ in run), run[0][1]) for run in runs if run]
    spans += [(m.group(2).strip(), m.start()) for m in _QUOTED.finditer(question)]
    return list(dict.fromkeys(text for text, start in spans if text and not _PARTIAL.search(question[:start])))


class NamedValues:
    """Which databases (indices into the router's) store each folded value; ``values[i]`` None: database i's
    values are unknown (it could not be read when indexed)."""

    def __init__(self, values: Sequence[Iterable[str] | None]) -> None:
        owners: dict[str, set[int]] = defaultdict(set)
        for i, stored in enumerate(values):
            for value in stored or ():
                owners[value].add(i)
        self._owners = {p: frozenset(o) for p, o in owners.items()}
        self._unknown = frozenset(i for i, stored in enumerate(values) if stored is None)

    def __len__(self) -> int:
        return len(self._owners)

    def holders(self, question: str) -> list[tuple[str, frozenset[int]]]:
        """Each name the question says with the databases storing it (at most :data:`MAX_HOLDERS`)."""
        out = []
        for text in named_spans(question):
            name = phrase(text)
            content = [w for w in name.split() if w not in STOPWORDS]
            if not content or name in GENERIC_NAMES:  # "What is the ID of ...": a word, not a stored name
                continue
            owners = self._owners.get(name)
            if owners is None and len(content) > 1 and all(w in self._owners for w in content):
                owners = frozenset.intersection(*(self._owners[w] for w in content))
            if owners and len(owners) <= MAX_HOLDERS:
                out.append((text, owners))
        return out

    def choose(self, question: str, ranked: Sequence[int]) -> tuple[int, str] | None:
        """(position in ``ranked``, the name) of the database to answer instead of ``ranked[0]``: the first of
        the next ones within :data:`WITHIN` storing a name the question says, when ``ranked[0]`` stores none
        (and its values are known: one that could not be read may store it)."""
        held = self.holders(question) if ranked and ranked[0] not in self._unknown else []
        if not held or any(ranked[0] in owners for _, owners in held):
            return None
        for position, db in enumerate(ranked[1:WITHIN], start=1):
            for text, owners in held:
                if db in owners:
                    return position, text
        return None
