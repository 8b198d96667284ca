"""The schema knowledge model: plain dataclasses shared by every stage.

Ingest builds a ``DatabaseSchema`` from a SQLite file (plus descriptions and
profiles), the graph layer stores it as ``Database``/``Table``/``Column`` nodes
and reads it back in the same shape, and retrieval / prompt rendering consume
it. Nothing here talks to a database or a graph.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgsql.schema.meanings import ValueMeaning, parse_value_meaning
from kgsql.text.words import is_number


#: Longest value example kept in the graph (longer ones are cut with an ellipsis).
MAX_EXAMPLE_CHARS = 80


def shorten_example(value: Any) -> str:
    """A value as the graph keeps it: text, at most :data:`MAX_EXAMPLE_CHARS` characters."""
    text = str(value)
    return text if len(text) <= MAX_EXAMPLE_CHARS else text[: MAX_EXAMPLE_CHARS - 1] + "…"


@dataclass
class ColumnStats:
    """Per-column statistics computed at ingest."""

    distinct_count: int | None = None
    null_fraction: float | None = None
    min: Any = None  # number or ISO date string, for numeric/date columns
    max: Any = None
    sample: list[str] = field(default_factory=list)  # a few text values


@dataclass
class SpatialInfo:
    """SpatiaLite metadata of a geometry column."""

    geometry_type: str
    srid: int | None = None
    extent: list[float] | None = None  # [min_x, min_y, max_x, max_y]


@dataclass
class Column:
    name: str
    type: str = ""
    readable_name: str = ""  # BIRD's expanded name, e.g. "Free Meal Count (K-12)" for a cryptic one
    is_primary_key: bool = False
    not_null: bool = False
    description: str = ""
    value_examples: list[str] = field(default_factory=list)
    value_explanation: str = ""
    data_format: str = ""
    stats: ColumnStats = field(default_factory=ColumnStats)
    spatial: SpatialInfo | None = None

    @property
    def is_spatial(self) -> bool:
        return self.spatial is not None

    @property
    def holds_numbers(self) -> bool:
        """Does the column hold numbers, as far as ingest saw? By its most frequent values where it saw two
        different ones (Spider's ``car_makers.country`` is declared TEXT and holds ``1``, ``2``, ``3``), else by
        the declared type's SQLite affinity (INT, REAL, FLOA, DOUB, NUM, DEC). Rarer values may still be words
        (``Room``: ``324``, ``324B``), so what acts on it asks the database first."""
        known = {str(v).strip() for v in [*self.value_examples, *self.stats.sample] if str(v).strip()}
        if len(known) >= 2:
            return all(is_number(v) for v in known)
        return any(part in self.type.upper() for part in ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC"))

    @property
    def value_meaning(self) -> ValueMeaning:
        """Codes, closed value list, unit, missing markers and date format read from the
        column's value explanation (parsed on each read, so the text stays the one source)."""
        return parse_value_meaning(self.value_explanation, self.data_format)


@dataclass(frozen=True)
class DerivedExpression:
    """A named SQL expression over the database's columns, e.g. a ratio the questions use."""

    name: str
    expression: str
    description: str = ""


@dataclass(frozen=True)
class ForeignKey:
    """``table.column`` references ``ref_table.ref_column``."""

    table: str
    column: str
    ref_table: str
    ref_column: str
    origin: str = "declared"  # "declared" in the database, or "discovered" from its data (ingest/discover.py)
    coverage: float | None = None  # discovered: share of the column's values found in the target


@dataclass
class Table:
    name: str
    columns: list[Column] = field(default_factory=list)
    description: str = ""
    geo_description: str = ""
    row_count: int | None = None

    def column(self, name: str) -> Column:
        """The column called ``name`` (case-insensitive, as SQLite resolves names)."""
        for col in self.columns:
            if col.name.lower() == name.lower():
                return col
        import difflib

        from kgsql.errors import UnknownNameError

        close = difflib.get_close_matches(name, [c.name for c in self.columns], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UnknownNameError(f"no column '{name}' in table '{self.name}'{hint}")

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in self.columns if c.is_primary_key]

    def __repr__(self) -> str:
        """One line: the name, the row count and the column names (the fields are attributes)."""
        rows = f", rows={self.row_count}" if self.row_count is not None else ""
        names = ", ".join(c.name for c in self.columns[:12]) + (", ..." if len(self.columns) > 12 else "")
        return f"Table({self.name!r}{rows}, columns=[{names}])"

    def _repr_html_(self) -> str:
        """Notebooks: the table's columns with type, key, description and example values."""
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(c.name)}{' &#128273;' if c.is_primary_key else ''}</td><td>{escape(c.type)}</td>"
            f"<td>{escape(c.description)}</td><td>{escape(', '.join(map(str, c.value_examples[:3])))}</td></tr>"
            for c in self.columns)
        head = f"<b>{escape(self.name)}</b>" + (f" ({self.row_count} rows)" if self.row_count is not None else "")
        if self.description:
            head += f": {escape(self.description)}"
        return (f"<div>{head}<table><tr><th>column</th><th>type</th><th>description</th><th>values</th></tr>"
                f"{rows}</table></div>")


@dataclass
class DatabaseSchema:
    """One database's schema with all the knowledge kgsql holds about it."""

    name: str
    tables: list[Table] = field(default_factory=list)
    foreign_keys: list[ForeignKey] = field(default_factory=list)
    path: str = ""
    dialect: str = "sqlite"
    is_spatial: bool = False
    description: str = ""
    derived: list[DerivedExpression] = field(default_factory=list)
    # FKs whose target table/column does not exist: kept for reporting.
    dangling_foreign_keys: list[ForeignKey] = field(default_factory=list)

    def table(self, name: str) -> Table:
        """The table called ``name`` (case-insensitive); suggests near names when unknown."""
        for t in self.tables:
            if t.name.lower() == name.lower():
                return t
        import difflib

        from kgsql.errors import UnknownNameError

        close = difflib.get_close_matches(name, [t.name for t in self.tables], n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise UnknownNameError(f"table '{name}' not in database '{self.name}'{hint}")

    @property
    def column_count(self) -> int:
        return sum(len(t.columns) for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
