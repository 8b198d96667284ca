"""Warnings on an answer: short flags that say where a plausible-looking answer may be wrong.

Each flag is a code and one line. They are read from what the answer already
has (its SQL's explanation, its rows, its selection, its correction rounds) and
the question's own words; no model is called. A flag is not a verdict: on the
200-question Spider sample (docs/eval.md, issue 34) it separates most wrong
answers from most right ones, which is what makes it worth a reader's glance.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Sequence

from sqlglot import exp

from kgsql.correct.opinions import Opinion, differing, doubted
from kgsql.generate.degenerate import (counted_measures, counts_per_unique_key, echoed_columns, extreme_tests,
                                      text_for_numbers, ungrouped_columns, unlabelled_groups, unlinked_joins)
from kgsql.generate.explain import Explanation
from kgsql.generate.fanout import RowProbe, copied_rows, fanout_joins, own_aggregates, result_selects
from kgsql.generate.refusal import QUESTION_FORM_WORDS
from kgsql.generate.unmatched import unmatched_count
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.sql.dialects import dialect_of, sqlglot_name
from kgsql.sql.distance_units import unconverted_distance
from kgsql.sql.names import is_natural, parse_sql, reads_no_table
from kgsql.text.measures import asked_quantities, named_quantity
from kgsql.text.words import STOPWORDS, name_spans, says_name, singular_forms, split_identifier, words

__all__ = ["Flag", "FLAG_CODES", "answer_flags", "both_as_either", "negated_by_row", "one_total", "other_measure",
           "question_literals", "unused_columns", "unused_literals", "unused_tables"]

FLAG_CODES = ("constant", "no-edge-join", "unlinked-join", "fanout-join", "copied-rows", "unused-table",
              "unused-column", "unused-literal", "negation-by-row", "both-as-either", "other-measure", "echo",
              "count-per-unique", "text-for-number", "unlabelled-groups", "counted-measure", "tied-extreme",
              "ungrouped-column", "one-total", "zero-count", "distance-unit", "other-reading", "empty-result",
              "null-result", "corrected", "failed")
_QUOTED = re.compile(r"""(?:^|[\s(])["'“‘]([^"'”’]{1,80})["'”’]""")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
#: A literal the question defines as a code: "0 stands for no", "'Y' means yes", "1 refers to a closed account".
_DEFINED_CODE = re.compile(r"""(?<![\w.])(-?\d+(?:\.\d+)?|'[^']*'|"[^"]*")\s+"""
                           r"(?:stands?\s+for|means?|refers?\s+to|represents?|denotes?)\b", re.IGNORECASE)
#: A question that asks for what has none (``do not speak English``, ``without any``, ``never``).
_NEGATION = re.compile(r"\b(?:not|no|none|never|without)\b|n't\b", re.I)
_BOTH = re.compile(r"\bboth\b", re.I)
#: A question that asks for one value per group: "for each investor", "by different role types" ("each time"
#: is a frequency, "each other" a pairing; "on average each college has" asks for one average, so "each"
#: beside "average" is not read).
_EACH = re.compile(r"\beach\s+(?!time\b|other\b)\w+", re.I)
_DIFFERENT = re.compile(r"\b(?:for|by|on|across|among)\s+(?:the\s+|all\s+|all\s+the\s+)?(?:different|various)\s+\w+",
                        re.I)
_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.I)
#: A sentence's end: the mark before a space or the end of the question; "3.5", "St. Louis", "Mr. Smith" and
#: "e.g." end none.
_SENTENCE_END = re.compile(r"(?:(?<!\b[A-Z][a-z])(?<!\b[a-z]\.[a-z])\.|[?!;])(?=\s|$)")
#: A name's first word that marks a lookup table, which a question does not say ("the template types":
#: ``Ref_Template_Types``).
_LOOKUP_PREFIXES = frozenset({"ref", "lu", "lkp", "dim"})
#: Words that open a request ("Show ...", "Please list ...").
_COMMAND_WORDS = frozenset("show list give find tell return display get provide describe".split())
#: Column name words that name no notion of their own ("other_student_details", "type_code", "num_of_ticket").
_PLAIN_NAME_WORDS = frozenset("id ids name names code type number num count date year time value description title "
                              "details detail other status info data".split())


@dataclass(frozen=True)
class Flag:
    """One warning: a stable ``code`` (:data:`FLAG_CODES`) and a line for people."""

    code: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def question_literals(question: str) -> list[str]:
    """The quoted strings and the numbers a question states (what its SQL should use)."""
    quoted = [m.group(1).strip() for m in _QUOTED.finditer(question) if m.group(1).strip()]
    rest = _QUOTED.sub(" ", question)
    return list(dict.fromkeys([*quoted, *_NUMBER.findall(rest)]))


def _sql_literals(tree: exp.Expression) -> list[str]:
    """The SQL's literals, and its double-quoted names (SQLite reads ``"USA"`` as a string where no column
    has that name)."""
    quoted = [i.name for i in tree.find_all(exp.Identifier) if i.args.get("quoted")]
    return [lit.name for lit in tree.find_all(exp.Literal)] + quoted


def _same_number(a: str, b: str) -> bool:
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def _literal_used(literal: str, found: Sequence[str]) -> bool:
    """Whether one of the SQL's literals holds the question's ``literal`` (text: contained, any case; numbers: equal)."""
    if _NUMBER.fullmatch(literal):
        return any(_same_number(literal, v) for v in found) or any(literal in v for v in found)
    return any(literal.lower() in v.lower() or (v.strip("%").lower() and v.strip("%").lower() in literal.lower())
               for v in found)


def unused_literals(question: str, tree: exp.Expression) -> list[str]:
    """The question's literals that no literal of the SQL holds. Codes the question defines ("1 stands for yes,
    and 0 stands for no") explain the data: when the query uses one of them, the others are not missing."""
    found = _sql_literals(tree)
    defined = {m.group(1).strip("'\"") for m in _DEFINED_CODE.finditer(question)}
    code_used = any(_literal_used(code, found) for code in defined)
    return [literal for literal in question_literals(question)
            if not _literal_used(literal, found) and not (code_used and literal in defined)]


def _commands(question: str) -> set[int]:
    """The positions (in :func:`kgsql.text.words.words`) of the words that tell what to do: a command word
    that opens a sentence or follows "please" ("Please show the names": ``show`` asks, it names no table)."""
    out: set[int] = set()
    start = 0
    for sentence in _SENTENCE_END.split(question):
        said = words(sentence)
        out |= {start + i for i, w in enumerate(said)
                if w in _COMMAND_WORDS and (i == 0 or said[i - 1] == "please")}
        start += len(said)
    return out


def unused_tables(question: str, used: Iterable[str], schema: DatabaseSchema) -> list[str]:
    """Tables the question names (its words, one after another: :func:`kgsql.text.words.name_spans`) that
    the SQL leaves out.

    A table the question names outright and the SQL ignores is the issue's ``Customer_Orders``; any of the
    schema's (retrieval chooses every table the question names, so the selection adds nothing). A table a
    used table holds a key to is not counted: the query can stand for its rows by that key
    (``Has_Pet.PetID`` for ``Pets``, or a text column named after the table: ``match_season.Player``). Not
    a mention: words that name a used table ("the template type code" says ``Ref_Template_Types``, which the
    query reads, not ``Templates``), a command opening a sentence ("Show the names" does not name the table
    ``show``) and the words of a quoted value."""
    used_lower = {t.lower() for t in used}
    referenced = {fk.ref_table.lower() for fk in schema.foreign_keys if fk.table.lower() in used_lower}
    referenced |= _named_by_columns(schema, used_lower)
    forms = [singular_forms(w) for w in words(question)]
    spoken_for = _commands(question)
    for value in question_literals(question):  # "the club 'Hopkins Student Enterprises'" names no Student table
        spoken_for.update(i for span in name_spans(forms, "_".join(words(value))) for i in span)
    for table in schema.tables:
        if table.name.lower() in used_lower:
            plain = "_".join(w for w in split_identifier(table.name) if w not in _LOOKUP_PREFIXES)
            spoken_for.update(i for name in (table.name, plain) for span in name_spans(forms, name) for i in span)
    return [t.name for t in schema.tables if t.name.lower() not in used_lower | referenced
            and any(not set(span) <= spoken_for for span in name_spans(forms, t.name))]


def _named_by_columns(schema: DatabaseSchema, used_lower: set[str]) -> set[str]:
    """The tables (lower case) a text column of a used table is named after, every word of the table's name in
    the column's (``match_season.Player`` for ``player``, ``Marketing_Region_Code`` for ``Marketing_Regions``):
    the query reads the table's names or codes there. A column of numbers named after a table
    (``flights.Airline``, the airline's id) holds no names: "which airlines" still needs the table."""
    def name_forms(name: str) -> list[set[str]]:
        return [singular_forms(w) for w in split_identifier(name) if w not in _LOOKUP_PREFIXES]

    held = [set().union(*name_forms(c.name)) for t in schema.tables if t.name.lower() in used_lower
            for c in t.columns if not c.holds_numbers]
    return {t.name.lower() for t in schema.tables if t.name.lower() not in used_lower and name_forms(t.name)
            and any(all(forms & column for forms in name_forms(t.name)) for column in held)}


def unused_columns(question: str, tree: exp.Expression, used: Iterable[str], schema: DatabaseSchema) -> list[str]:
    """Columns of the tables the query reads that the question names and the query never uses:
    "where English or Dutch is the *official* language" answered without ``countrylanguage.IsOfficial``.

    ``used``: the tables the query reads. A column counts by its name's words, said one after another in the
    question (any number), leaving out words that name no notion (``id``, ``type``, ``other``), words of how a
    question asks (``highest``, ``total``: :data:`kgsql.generate.refusal.QUESTION_FORM_WORDS`) and words of a
    table's name ("the dog's age" says ``Dogs``, not ``dog_id``). Not flagged: keys, declared or discovered (a
    query stands for a row by any of them; the columns of a join mined from past queries are not keys), a
    text column whose values are all distinct when the question says it in the plural ("how many schools":
    ``university.School`` names the rows, not a value asked for), a column whose words
    a used column's name (in either number: "beds" for ``bedType``) or a literal of the query holds (a USING
    list's names are used), any column of a query that shows ``*`` or joins NATURAL."""
    if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
           for select in tree.find_all(exp.Select) for p in select.expressions):
        return []
    joins = [j for select in tree.find_all(exp.Select) for j in select.args.get("joins") or []]
    if any(is_natural(j) for j in joins):
        return []  # a NATURAL join uses columns it does not name
    used_lower = {t.lower() for t in used}
    referenced_lower = {c.name.lower() for c in tree.find_all(exp.Column)}
    referenced_lower |= {i.name.lower() for j in joins for i in j.args.get("using") or []}
    literals = " ".join(lit.name.lower() for lit in tree.find_all(exp.Literal))
    declared = [fk for fk in schema.foreign_keys if fk.origin != "mined"]  # a mined join's columns are not keys
    keys = {(fk.table.lower(), fk.column.lower()) for fk in declared}
    keys |= {(fk.ref_table.lower(), fk.ref_column.lower()) for fk in declared}
    table_words = {f for t in schema.tables for w in split_identifier(t.name) for f in singular_forms(w)}
    tables = [t for t in schema.tables if t.name.lower() in used_lower]
    held = {f for t in tables for c in t.columns if c.name.lower() in referenced_lower
            for w in split_identifier(c.name) for f in singular_forms(w)}
    out = []
    for table in tables:
        for column in table.columns:
            name = column.name.lower()
            if name in referenced_lower or column.is_primary_key or (table.name.lower(), name) in keys:
                continue
            notion = [w for w in split_identifier(column.name) if len(w) > 2 and w not in STOPWORDS
                      and w not in _PLAIN_NAME_WORDS and w not in QUESTION_FORM_WORDS]
            if _labels_rows(table, column) and _said_in_plural(question, notion):
                continue
            if not notion or all(singular_forms(w) & (table_words | held) or w in literals for w in notion):
                continue
            if says_name(question, "_".join(notion)):
                out.append(f"{table.name}.{column.name}")
    return out


def _labels_rows(table: Table, column: Column) -> bool:
    """A text column whose values ingest found all distinct (``university.School``): it names each row."""
    distinct, rows = column.stats.distinct_count, table.row_count
    return bool(distinct and rows and rows > 1 and distinct >= rows and not column.holds_numbers)


def _said_in_plural(question: str, notion: Sequence[str]) -> bool:
    """Does the question say a word of ``notion`` in the plural ("How many schools", "across all schools")?
    Said so of a column that names each row, it names the rows (which any column stands for); "the location
    of the stadium" asks for the column itself."""
    said = words(question)
    return any(w != q and w in singular_forms(q) for w in notion for q in said)


def negated_by_row(question: str, tree: exp.Expression) -> list[str]:
    """``T2.Language != 'English'`` where the question asks for what does *not* have English: an inequality on
    a joined table tests each joined row, so a country with English and French still matches. Returned: the
    inequalities on a joined table, when the question negates and the query joins without NOT IN, NOT
    EXISTS or EXCEPT (the forms that mean "has none")."""
    if not _NEGATION.search(question) or tree.find(exp.Except) is not None:
        return []
    if any(isinstance(n.this, (exp.In, exp.Exists)) for n in tree.find_all(exp.Not)):
        return []
    out = []
    for select in tree.find_all(exp.Select):
        joined = {j.alias_or_name.lower() for j in select.args.get("joins") or []}
        where = select.args.get("where")
        if not joined or where is None:
            continue
        for test in where.find_all(exp.NEQ):
            column = test.find(exp.Column)
            if column is not None and column.table.lower() in joined:  # an alias, else the table's own name
                out.append(test.sql())
    return out


def both_as_either(question: str, tree: exp.Expression) -> str | None:
    """``Year IN (2014, 2015)`` or ``x = 'a' OR x = 'b'`` where the question asks for rows with *both*: one row
    holds one value, so this finds either. Returned: the column tested, or None."""
    if not _BOTH.search(question):
        return None
    for test in tree.find_all(exp.In):
        if isinstance(test.this, exp.Column) and len(test.expressions) >= 2 and not isinstance(test.parent, exp.Not):
            return test.this.sql()
    for either in tree.find_all(exp.Or):
        sides = [either.left, either.right]
        if all(isinstance(x, exp.EQ) and isinstance(x.this, exp.Column) for x in sides):
            if sides[0].this.sql().lower() == sides[1].this.sql().lower():
                return sides[0].this.sql()
    return None


def one_total(question: str, tree: exp.Expression) -> str | None:
    """The question's "for each X" / "for different X" (outside its quoted values: 'Each Day Lotion') when every
    SELECT of the answer aggregates (COUNT, SUM, AVG, MIN, MAX) with no GROUP BY: the rows of all the groups
    are added into one total. Returned: the question's phrase, or None."""
    for value in question_literals(question):
        question = question.replace(value, " ")
    asked = _DIFFERENT.search(question) or (None if _AVERAGE.search(question) else _EACH.search(question))
    selects = result_selects(tree) if asked else []
    for select in selects:
        if select.args.get("group") is not None or not own_aggregates(select, in_windows=False):
            return None
    return " ".join(asked.group(0).split()) if asked and selects else None


def _rankings(tree: exp.Expression) -> list[exp.Expression]:
    """What the query ranks by: every SELECT's ORDER BY key (an alias read as its expression) and every
    MAX/MIN. Not read: a positional ``ORDER BY 2``, the ORDER BY of a UNION, a window's ORDER BY."""
    found: list[exp.Expression] = []
    for select in tree.find_all(exp.Select):
        aliases = {p.alias.lower(): p.this for p in select.expressions if isinstance(p, exp.Alias) and p.alias}
        order = select.args.get("order")
        for key in order.expressions if order is not None else []:
            key = key.this if isinstance(key, exp.Ordered) else key
            if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
                key = aliases[key.name.lower()]
            found.append(key)
    found += list(tree.find_all(exp.Max, exp.Min))
    return found


def _measure_names(node: exp.Expression) -> list[str]:
    """The names in an expression that can say what it measures: its columns' and its functions'."""
    names = [c.name for c in node.find_all(exp.Column)]
    for func in node.find_all(exp.Func):
        if not isinstance(func, exp.AggFunc):
            names.append(func.name if isinstance(func, exp.Anonymous) else func.sql_name())
    return names


def other_measure(question: str, tree: exp.Expression, dialect: str | None = None) -> tuple[str, str, str] | None:
    """"Which river is the longest?" ranked by ``Area(provinces.Shape)``: the question's superlative fixes a
    quantity (:mod:`kgsql.text.measures`), and everything the query ranks by measures another plain quantity.
    A ranking that measures nothing plain (an id, ``COUNT(*)``) may be the superlative's ("the price in the
    latest order": ``MAX(order_id)``), so then nothing is claimed. Returned: (the superlative, the ranking
    expression, its quantity), or None."""
    said, asked = asked_quantities(question)
    if not asked:
        return None
    rankings = _rankings(tree)
    measured = [(key, q) for key in rankings if (q := named_quantity(_measure_names(key))) is not None]
    if not measured or len(measured) < len(rankings) or any(q in asked for _key, q in measured):
        return None
    key, quantity = measured[0]
    return said[0], key.sql(dialect=dialect, normalize_functions=False), quantity  # as the model wrote it


def _first(code: str, found: Sequence[Any], text: Callable[[Any], str]) -> list[Flag]:
    """One flag ``code`` for the first of ``found`` (none when nothing was found)."""
    return [Flag(code, text(found[0]))] if found else []


def _degenerate(tree: exp.Expression, schema: DatabaseSchema, explanation: Explanation,
                dialect: str | None, n_rows: int) -> list[Flag]:
    """The flags of :mod:`kgsql.generate.degenerate`: answers the query's form decides (``n_rows``: the rows
    it returned, 0 when it failed; groups and ties need two at least before they can be told apart)."""
    echoed = echoed_columns(tree, dialect)
    stored = [f.column for f in explanation.filters if f.stored is not None]
    keys = unlabelled_groups(tree, dialect) if n_rows > 1 else []
    return [
        *_first("echo", [echoed] if echoed else [], lambda shown: f"the query shows only {', '.join(shown[:3])}, "
                "which its WHERE fixes to a value: the answer repeats the question"),
        *_first("count-per-unique", counts_per_unique_key(tree, schema),
                lambda column: f"the query counts rows per {column}, which is unique: every count is 1"),
        *_first("unlinked-join", unlinked_joins(tree, schema), lambda table: f"the query joins {table} with no "
                "condition tying it to the other tables: every row is paired with every row"),
        *_first("text-for-number", text_for_numbers(tree, schema, stored), lambda found: f"the query compares "
                f"{found[0]}, which holds numbers, with the text '{found[1]}', which it does not hold"),
        *_first("unlabelled-groups", [keys] if keys else [], lambda grouped: f"the query groups by "
                f"{', '.join(grouped[:2])} and shows only the aggregates: no row says which group it is"),
        *_first("counted-measure", counted_measures(tree, schema), lambda column: f"the query counts the rows "
                f"that have a {column} (COUNT); the amount they add up to is SUM"),
        *_first("tied-extreme", extreme_tests(tree, dialect) if n_rows > 1 else [], lambda test: f"{n_rows} rows "
                f"pass {test}: they tie, and the question may ask for one"),
    ]


def _empty_or_null(rows: Sequence[Sequence[Any]], error: str | None) -> list[Flag]:
    if error:
        return []
    if not rows:
        return [Flag("empty-result", "the query returned no rows")]
    if len(rows) == 1 and all(v is None for v in rows[0]):
        return [Flag("null-result", "the query returned one row of NULL (an aggregate over nothing?)")]
    return []


def _normal(sql: str, dialect: str) -> str:
    """The query as sqlglot writes it (keyword case and spacing do not count as a change; literals do)."""
    tree = parse_sql(sql, dialect)
    return tree.sql(dialect=dialect) if tree is not None else " ".join(sql.split()).rstrip(";")


def answer_flags(*, question: str, sql: str, schema: DatabaseSchema, explanation: Explanation,
                 rows: Sequence[Sequence[Any]], error: str | None = None, first_sql: str = "",
                 rounds: int = 1, exists: RowProbe | None = None,
                 opinions: Sequence[Opinion | dict[str, Any]] = ()) -> list[Flag]:
    """The flags of one answer. ``first_sql``: the first query run; ``rounds``: the generations the
    correction loop made. ``corrected`` needs both a second generation and a final query other than the
    first: a join repair alone (no second generation) follows a graph edge, which the explanation shows,
    where a second generation is the model's guess after a failure. ``exists``: a read-only probe on the
    database, for ``copied-rows``, ``ungrouped-column`` and ``zero-count`` (without one they are not looked for).
    ``opinions``: the readings sampled to check the answer (``kgsql.correct.opinions``), for ``other-reading``."""
    flags: list[Flag] = []
    if error:
        flags.append(Flag("failed", f"the query failed: {error.splitlines()[0][:120]}"))
    for join in explanation.joins:
        if join.origin is None:
            flags.append(Flag("no-edge-join", f"joins {join.left} = {join.right}, which no graph edge links"))
    dialect = sqlglot_name(dialect_of(schema))
    tree = parse_sql(sql, dialect) if sql.strip() else None
    if reads_no_table(tree):
        flags.append(Flag("constant", "the query reads no table: its answer was written, not looked up"))
    if tree is not None:
        used = [t["table"] for t in explanation.tables]
        for table in unused_tables(question, used, schema):
            flags.append(Flag("unused-table", f"the question names table {table}, which the query does not use"))
        for column in unused_columns(question, tree, used, schema)[:2]:
            flags.append(Flag("unused-column", f"the question names column {column}, which the query does not use"))
        for table in fanout_joins(question, tree, schema):
            flags.append(Flag("fanout-join", f"the query joins {table} for none of its columns: each row is copied "
                                             f"once per matching row of {table}, which changes counts and sums"))
        for table in copied_rows(tree, schema, rows, exists, dialect)[:1] if exists is not None and not error else []:
            flags.append(Flag("copied-rows", f"the answer shows the same row of {table} more than once: a join "
                                             "copied it (DISTINCT, or IN instead of the join?)"))
        for column in ungrouped_columns(tree, exists, dialect) if exists is not None and rows and not error else []:
            flags.append(Flag("ungrouped-column", f"the query shows {column} beside a COUNT, SUM or AVG with no "
                                                  f"GROUP BY: one row, with the {column} of one of the rows it "
                                                  "sums up, which hold several (GROUP BY?)"))
        missing = unused_literals(question, tree)
        if missing:
            shown = ", ".join(repr(m) for m in missing[:3])
            flags.append(Flag("unused-literal", f"the question's {shown} do(es) not appear in the query"))
        by_row = negated_by_row(question, tree)
        if by_row:
            flags.append(Flag("negation-by-row", f"the question says 'not', and {by_row[0]} tests each joined row: "
                                                 "rows with another value still match (\"has none\" is NOT IN)"))
        either = both_as_either(question, tree)
        if either:
            flags.append(Flag("both-as-either", f"the question asks for 'both', and {either} is tested for either "
                                                "value (one row holds one value)"))
        per_group = one_total(question, tree)
        if per_group and not any(f.code == "ungrouped-column" for f in flags):  # one missing GROUP BY, one flag
            flags.append(Flag("one-total", f"the question asks '{per_group}', and the query adds all the rows into "
                                           "one total (no GROUP BY)"))
        ranked = other_measure(question, tree, dialect)
        if ranked:
            flags.append(Flag("other-measure", f"the question asks for the {ranked[0]}, and the query ranks by "
                                               f"{ranked[1]}, which measures {ranked[2]}"))
        unconverted = unconverted_distance(question, tree, dialect)
        if unconverted:
            flags.append(Flag("distance-unit", f"the question says {unconverted[0]}, and the query compares "
                                               f"{unconverted[1]}, which measures in metres, with that number"))
        flags += _degenerate(tree, schema, explanation, dialect, 0 if error else len(rows))
        unmatched = unmatched_count(tree, rows, explanation, exists, dialect) \
            if exists is not None and not error and not any(f.code == "text-for-number" for f in flags) else None
        if unmatched:  # (text-for-number names the same cause)
            flags.append(Flag("zero-count", f"the query counts 0 rows, and {unmatched[0]} holds no "
                                            f"'{unmatched[1]}' in any spelling"))
    if doubted(opinions):
        flags.append(Flag("other-reading", f"the model, asked {len(opinions)} more times, never wrote a query with "
                                           f"these rows ({differing(opinions)} returned others): the question may "
                                           "read another way"))
    flags += _empty_or_null(rows, error)
    if sql and rounds > 1 and first_sql and _normal(first_sql, dialect) != _normal(sql, dialect):
        flags.append(Flag("corrected", f"self-correction rewrote the model's first query ({rounds} generations)"))
    return flags
