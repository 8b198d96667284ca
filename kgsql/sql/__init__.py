"""SQL analysis shared by kgsql's modules (no prompt templates, no tips).

:mod:`kgsql.sql.names` resolves the table and column names of a query the
way SQLite does and reports every naming problem at once; self-correction
(:mod:`kgsql.correct`) turns those problems into tips.
:mod:`kgsql.sql.extract` pulls the SQL query out of model output, and
:mod:`kgsql.sql.spatialite` holds the SpatiaLite function knowledge
(``knowledge/spatialite_functions.yaml``) that prompts and tips draw on.
"""
from __future__ import annotations

from kgsql.sql.names import Problem, SchemaNames, Source, analyse, parse_sqlite, resolve, scopes, sources

__all__ = ["Problem", "SchemaNames", "Source", "analyse", "parse_sqlite", "resolve", "scopes", "sources"]
