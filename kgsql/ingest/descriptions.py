"""Read BIRD-style column descriptions and the spatial dataset's region descriptions.

Two file formats, both third-party data with quirks this module absorbs:

* ``database_description/<table>.csv`` (BIRD, and the spatial dataset's copy
  of it): header ``original_column_name, column_name, column_description,
  data_format, value_description``; the spatial dataset adds
  ``column_description_CN, value_description_CN``. Seen in the wild: UTF-8
  with and without BOM, cp1252 (``\\x95`` bullets, ``\\x92`` quotes), names
  padded with spaces, an empty trailing header cell, file names whose case
  differs from the table's.
* ``<db>.table.csv`` (spatial dataset): ``name, description_CN,
  description_EN``: one geographic description of each table per language.

Encoding: strict UTF-8 (BOM stripped) first, then UTF-16 when a UTF-16 BOM is
present, then strict cp1252, then latin-1 (which cannot fail). charset-normalizer
is deliberately not used: on BIRD's short files it guessed cp775 / cp1250 for
the cp1252 ones (turning bullets into other letters) and cp949 for a UTF-8
one, while strict decoding gets every file right. UTF-8 decoding of real
cp1252 text with non-ASCII bytes fails almost surely, so trying it first is safe.

Malformed files raise :class:`ProfileError` naming the file and the problem;
keys of every returned mapping are lower-case, as SQLite matches names.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from kgsql.errors import ProfileError

__all__ = [
    "ColumnDescription",
    "decode_bytes",
    "load_description_dir",
    "load_description_file",
    "load_table_region_csv",
]

#: Description CSV header (lower-cased, stripped) -> ColumnDescription field.
_HEADER_FIELDS = {
    "original_column_name": "original_name",
    "column_name": "readable_name",
    "column_description": "description",
    "data_format": "data_format",
    "value_description": "value_description",
    "column_description_cn": "description_zh",
    "value_description_cn": "value_description_zh",
    "column_description_zh": "description_zh",
    "value_description_zh": "value_description_zh",
}
_LANGUAGE_ALIASES = {"cn": "zh", "chs": "zh", "zh_cn": "zh"}


@dataclass(frozen=True)
class ColumnDescription:
    """What a description CSV says about one column (empty string = not given)."""

    original_name: str
    readable_name: str = ""
    description: str = ""
    data_format: str = ""
    value_description: str = ""
    description_zh: str = ""
    value_description_zh: str = ""


def decode_bytes(data: bytes, source: str | os.PathLike[str] = "<bytes>") -> str:
    """Decode a description file: UTF-8(-sig), UTF-16 by BOM, cp1252, latin-1."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise ProfileError(f"{source}: has a UTF-16 byte-order mark but is not UTF-16: {exc}") from exc
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


def _read_rows(path: Path) -> list[list[str]]:
    """All CSV rows of ``path`` (decoded, newlines normalised); ProfileError if unreadable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ProfileError(f"{path}: contains NUL bytes; not a text CSV file")
    text = decode_bytes(data, path)
    try:
        return list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ProfileError(f"{path}: malformed CSV: {exc}") from exc


def _clean(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


def load_description_file(path: str | os.PathLike[str]) -> dict[str, ColumnDescription]:
    """Column descriptions of one ``<table>.csv``, keyed by lower-case column name."""
    p = Path(path)
    rows = _read_rows(p)
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise ProfileError(f"{p}: empty file; expected a header starting with original_column_name")
    header = [cell.strip().lower() for cell in rows[0]]
    if "original_column_name" not in header:
        raise ProfileError(
            f"{p}: header has no 'original_column_name' column (got {', '.join(h for h in header if h) or 'nothing'})"
        )
    width = len(header)
    fields = [_HEADER_FIELDS.get(h) for h in header]
    result: dict[str, ColumnDescription] = {}
    lines: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue  # blank line
        if len(row) > width and any(cell.strip() for cell in row[width:]):
            raise ProfileError(f"{p}: record {number} has {len(row)} fields but the header has {width}")
        values: dict[str, str] = {}
        for field_name, cell in zip(fields, row):
            if field_name and not values.get(field_name):
                values[field_name] = _clean(cell)
        name = values.get("original_name", "")
        if not name:
            raise ProfileError(f"{p}: record {number} has no original_column_name")
        entry = ColumnDescription(**values)  # type: ignore[arg-type]
        key = name.lower()
        if key in result and replace(entry, original_name=result[key].original_name) != result[key]:
            raise ProfileError(
                f"{p}: column '{name}' is described twice with different text (records {lines[key]} and {number})"
            )
        result.setdefault(key, entry)
        lines.setdefault(key, number)
    return result


def load_description_dir(
    directory: str | os.PathLike[str], *, on_error: Callable[[str], None] | None = None,
) -> dict[str, dict[str, ColumnDescription]]:
    """All ``*.csv`` in a BIRD ``database_description`` folder: table -> column -> description.

    Table and column keys are lower-case; the table name is the file name
    without ``.csv`` (case ignored, as SQLite ignores it). ``on_error``: a
    file that cannot be read is reported to it (one line naming the file and
    the problem) and skipped, so one broken file costs only its own table's
    descriptions; without it, the first such file raises :class:`ProfileError`.
    """
    d = Path(directory)
    if not d.is_dir():
        raise ProfileError(f"{d}: description folder not found")
    tables: dict[str, dict[str, ColumnDescription]] = {}
    origin: dict[str, Path] = {}
    for path in sorted(d.iterdir()):
        if not path.is_file() or path.suffix.lower() != ".csv" or path.name.startswith("."):
            continue
        table = path.stem.strip().lower()
        if table in origin:
            raise ProfileError(f"{d}: '{origin[table].name}' and '{path.name}' describe the same table")
        origin[table] = path
        try:
            tables[table] = load_description_file(path)
        except ProfileError as exc:
            if on_error is None:
                raise
            on_error(f"description file skipped: {exc}")
    return tables


def load_table_region_csv(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """A spatial ``<db>.table.csv``: lower table name -> {language: description}.

    Columns ``description_EN`` / ``description_CN`` become ``"en"`` / ``"zh"``;
    any other ``description_<lang>`` column is kept under ``<lang>``.
    """
    p = Path(path)
    rows = _read_rows(p)
    if not rows:
        raise ProfileError(f"{p}: empty file; expected a header 'name,description_CN,description_EN'")
    header = [cell.strip().lower() for cell in rows[0]]
    if "name" not in header:
        raise ProfileError(f"{p}: header has no 'name' column (got {', '.join(h for h in header if h) or 'nothing'})")
    name_at = header.index("name")
    languages: dict[int, str] = {}
    for i, h in enumerate(header):
        if h.startswith("description_") and len(h) > len("description_"):
            lang = h[len("description_"):]
            languages[i] = _LANGUAGE_ALIASES.get(lang, lang)
    if not languages:
        raise ProfileError(f"{p}: header has no description_<language> column")
    result: dict[str, dict[str, str]] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header) and any(cell.strip() for cell in row[len(header):]):
            raise ProfileError(f"{p}: record {number} has {len(row)} fields but the header has {len(header)}")
        name = _clean(row[name_at]) if name_at < len(row) else ""
        if not name:
            raise ProfileError(f"{p}: record {number} has no table name")
        if name.lower() in result:
            raise ProfileError(f"{p}: table '{name}' appears twice (record {number})")
        result[name.lower()] = {
            lang: _clean(row[i]) for i, lang in languages.items() if i < len(row) and row[i].strip()
        }
    return result
