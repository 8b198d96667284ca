"""PostgreSQL functions that reach past the query, found in the database's own catalog.

A static deny-list cannot see SQL that a function runs from a string:
``ts_stat('SELECT ... pg_read_file(...)')`` calls nothing denied itself, yet
runs whatever its text says, as the connected role. So the engine asks
``pg_proc`` once per connection which functions of *this* database run SQL
given as a value (core, extensions, the owner's own), and refuses a
statement that calls any of them by name. A function is in the set when
(:data:`FUNCTIONS_SQL`, one rule per ``why``):

* **query argument** -- it takes a text argument named like a query
  (``query``, ``sql``, ``sqlquery``, ``command``, ``statement``...):
  ``ts_stat``, ``query_to_xml``, ``query_to_xmlschema``,
  ``query_to_xml_and_xmlschema``;
* **cursor argument** -- it takes a ``refcursor``, a cursor opened by name
  elsewhere: ``cursor_to_xml``, ``cursor_to_xmlschema``;
* **C symbol** -- a compiled function taking text whose C symbol has a
  ``query``/``sql``/``exec``/``execute``/``spi`` part:
  ``ts_rewrite(tsquery, text)`` (``tsquery_rewrite_query``), ``dblink_exec``,
  ``dblink_send_query``;
* **caller-shaped rows** -- it takes text and returns ``SETOF record`` whose
  columns the caller declares, which is what a function returning the rows
  of a query it was given looks like: ``dblink``, ``dblink_fetch``,
  ``dblink_get_result``, tablefunc's ``crosstab``/``connectby``, xml2's
  ``xpath_table``;
* **dynamic SQL** -- a function written in SQL or a procedural language,
  taking text, whose body runs SQL from a value (PL/pgSQL ``EXECUTE``,
  ``plpy.execute``, ``spi_exec_query``...);
* **same library** -- a compiled function taking text from the same shared
  library as one found above (``dblink_connect``, ``dblink_open``);
* **calls** -- a SQL/procedural function whose body calls one found above
  (a wrapper around ``ts_stat``), to any depth;
* **untrusted language** -- every function in an untrusted procedural
  language (``plpython3u``, ``plperlu``): it reaches the server's files and
  programs whoever calls it;
* **superuser definer** -- a SQL/procedural ``SECURITY DEFINER`` function
  owned by a superuser: it runs as that superuser whoever calls it.

Names are compared lowercased and without schema, so every overload of a
name in the set is refused (``ts_rewrite(tsquery, tsquery, tsquery)`` with
``ts_rewrite(tsquery, text)``): the guard errs toward refusing.
:func:`called_names` reads the names a statement calls twice -- through
sqlglot's PostgreSQL tokenizer and parse, and through the SQLite-faithful
tokenizer of :mod:`kgsql.db.statement` -- so that SQL one of them reads
differently from PostgreSQL still shows its calls to the other; ``U&"..."``
identifiers are decoded first.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from kgsql.db.statement import called_names as lexical_called_names

__all__ = ["FUNCTIONS_SQL", "called_names", "reaching_functions"]

#: One row per function that reaches past the query: (lowercase name, why).
FUNCTIONS_SQL: Final = r"""
WITH RECURSIVE fn AS (
    SELECT p.oid, lower(p.proname) AS name, p.probin, l.lanname, p.prosrc,
           l.lanname IN ('internal', 'c') AS compiled,
           (l.lanispl OR l.lanname = 'sql') AS scripted,
           (l.lanispl AND NOT l.lanpltrusted) AS untrusted,
           p.prosecdef AND EXISTS (SELECT 1 FROM pg_roles o WHERE o.oid = p.proowner AND o.rolsuper) AS super_definer,
           pg_get_userbyid(p.proowner) AS owner,
           ARRAY(SELECT lower(a.argname)
                 FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]), p.proargnames,
                             coalesce(p.proargmodes, array_fill('i'::"char",
                                      ARRAY[cardinality(coalesce(p.proallargtypes, p.proargtypes::oid[]))])))
                      AS a(argtype, argname, argmode)
                 WHERE a.argmode IN ('i', 'b', 'v') AND a.argtype IN ('text'::regtype, 'varchar'::regtype,
                                                                      'bpchar'::regtype, 'name'::regtype)
           ) AS text_args,
           EXISTS (SELECT 1 FROM unnest(p.proargtypes::oid[]) AS t(argtype)
                   WHERE t.argtype IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype))
               AS takes_text,
           'refcursor'::regtype = ANY (p.proargtypes::oid[]) AS takes_cursor,
           (p.prorettype = 'record'::regtype AND p.proretset
            AND NOT coalesce(p.proargmodes && ARRAY['o', 'b', 't']::"char"[], false)) AS caller_shaped
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
), direct AS (
    SELECT oid, name, probin, compiled, CASE
        WHEN EXISTS (SELECT 1 FROM unnest(text_args) AS a(argname)
                     WHERE a.argname ~ '^(sql|sqlquery|sql_?query|query|query_?text|command|statement|stmt|cmd)$')
            THEN 'takes SQL as a text argument'
        WHEN takes_cursor THEN 'reads a cursor opened by name'
        WHEN compiled AND takes_text AND prosrc ~* '(^|_)(query|sql|exec|execute|spi)(_|$)'
            THEN format('runs SQL given as text (C function %s)', prosrc)
        WHEN takes_text AND caller_shaped THEN 'returns the rows of SQL given as text'
        WHEN scripted AND takes_text AND prosrc ~* '\m(execute|spi_exec\w*|spi_query|spi_prepare)\M'
            THEN 'runs SQL built from its text arguments (dynamic SQL)'
        WHEN untrusted THEN format('is written in the untrusted language %s', lanname)
        WHEN super_definer AND scripted THEN format('runs as superuser %s whoever calls it (SECURITY DEFINER)', owner)
        END AS why
    FROM fn
), seed AS (
    SELECT oid, name, why FROM direct WHERE why IS NOT NULL
    UNION ALL
    SELECT f.oid, f.name, format('comes from the same library as %s, which runs SQL given as text', min(d.name))
    FROM fn f JOIN direct d ON d.compiled AND d.probin = f.probin AND d.why IS NOT NULL
    WHERE f.compiled AND f.takes_text AND f.probin IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM direct x WHERE x.oid = f.oid AND x.why IS NOT NULL)
    GROUP BY f.oid, f.name
), calls AS MATERIALIZED (
    SELECT DISTINCT f.oid, f.name, m[1] AS callee
    FROM fn f, regexp_matches(lower(f.prosrc), '([a-z_\u0080-\uffff][a-z0-9_$\u0080-\uffff]*)"?\s*\(', 'g') AS m
    WHERE f.scripted
), found(oid, name, why, rank) AS (
    SELECT oid, name, why, 0 FROM seed
    UNION
    SELECT c.oid, c.name, format('calls %s', f.name), 1
    FROM calls c JOIN found f ON f.name = c.callee AND c.oid <> f.oid
)
SELECT DISTINCT ON (name) name, why FROM found ORDER BY name, rank, why
"""


def reaching_functions(run: Callable[[str], list[tuple[Any, ...]]]) -> dict[str, str]:
    """Lowercase function name -> why calling it reaches past the query, for the connected database."""
    return {str(name): str(why) for name, why in run(FUNCTIONS_SQL)}


_UNICODE_ESCAPE: Final = re.compile(r"\\(\\|\+[0-9A-Fa-f]{6}|[0-9A-Fa-f]{4})")


def _decode_unicode_identifier(text: str) -> str:
    """The name a ``U&"..."`` identifier stands for (``\\0073`` and ``\\+000073`` escapes, ``\\\\``)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code == "\\":
            return "\\"
        try:
            return chr(int(code.lstrip("+"), 16))
        except (ValueError, OverflowError):
            return match.group(0)

    return _UNICODE_ESCAPE.sub(one, text)


def _sqlglot_names(statement: str) -> set[str]:
    names: set[str] = set()
    try:
        tokens = sqlglot.tokenize(statement, read="postgres")
    except (SqlglotError, RecursionError):
        return names
    for i, (token, following) in enumerate(zip(tokens, tokens[1:])):
        if following.token_type != TokenType.L_PAREN or not token.text:
            continue
        names.add(token.text)
        if token.token_type == TokenType.IDENTIFIER and i >= 2 and tokens[i - 1].token_type == TokenType.AMP \
                and tokens[i - 2].text.lower() == "u":
            names.add(_decode_unicode_identifier(token.text))
    try:
        trees = sqlglot.parse(statement, read="postgres")
    except (SqlglotError, RecursionError):
        return names
    for tree in trees:
        if tree is None:
            continue
        for node in tree.find_all(exp.Anonymous):
            names.add(node.name)
            names.add(_decode_unicode_identifier(node.name))
    return names


def called_names(statement: str) -> set[str]:
    """Every name ``statement`` may call as a function, lowercased (a superset: keywords before ``(`` too)."""
    names = _sqlglot_names(statement)
    for name in lexical_called_names(statement):
        names.add(name)
        names.add(_decode_unicode_identifier(name))
    return {n.strip().lower() for n in names if n.strip()}
