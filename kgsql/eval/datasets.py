"""Benchmark loaders: Spider (and variants), BIRD (dev, Mini-Dev), spatial QA.

Every loader returns a :class:`Dataset` of :class:`Example` records in file
order, so line ``i`` of a prediction file lines up with ``examples[i]``.
Questions whose SQLite file is absent stay in the dataset (``missing_db``
lists them) so scores can say how many were not scored instead of silently
shrinking the denominator.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from kgsql.errors import InputError

GOLD_SEPARATOR = "%%%"
SPATIAL_FIELDS = (
    "label", "questionCHI", "evidenceCHI", "nameCHI",
    "question", "evidence", "name", "SQL", "Eval", "id",
)
# Spatial label tags (README of the spatial dataset plus the QA files):
# G = answerable by a general (non-spatial) query, S = by a spatial query,
# Region = restricted to an area, Intersection = needs a geometry intersection.
SPATIAL_TAGS = ("G", "S", "Region", "Intersection")


@dataclass
class Example:
    """One benchmark question with every gold SQL that counts as correct."""

    id: str
    db_id: str
    question: str
    gold: list[str]
    evidence: str = ""
    difficulty: str | None = None  # Spider hardness or BIRD difficulty
    label: str | None = None  # spatial label, e.g. "G S Region"
    hints: str = ""  # spatial `name` field: literal values used by the question
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tags(self) -> list[str]:
        """Label split into tags ("G S Region" -> ["G", "S", "Region"])."""
        return self.label.split() if self.label else []


@dataclass
class Dataset:
    """Examples plus where their databases live."""

    name: str
    split: str
    root: Path
    examples: list[Example]
    db_files: dict[str, Path | None]
    tables_file: Path | None = None

    def db_path(self, db_id: str) -> Path | None:
        """The SQLite file of ``db_id``, or None when it is not on disk."""
        return self.db_files.get(db_id)

    @property
    def missing_db(self) -> list[Example]:
        """Examples that cannot be executed because their database file is absent."""
        return [ex for ex in self.examples if self.db_files.get(ex.db_id) is None]

    @property
    def missing_db_ids(self) -> list[str]:
        return sorted({ex.db_id for ex in self.missing_db})

    def __len__(self) -> int:
        return len(self.examples)


# --------------------------------------------------------------------------- helpers


def _require_dir(path: str | Path) -> Path:
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputError(f"data directory not found: {p}")
    return p


def _first_existing(root: Path, names: list[str], what: str) -> Path:
    for name in names:
        if (root / name).is_file():
            return root / name
    raise InputError(f"no {what} in {root}: looked for {', '.join(names)}")


def _read_json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of questions")
    return data


def _db_id(row: dict[str, Any], qfile: Path, i: int) -> str:
    if not isinstance(row, dict) or not row.get("db_id"):
        raise InputError(f"{qfile}: question {i} has no db_id")
    return str(row["db_id"])


def _find_db(db_root: Path | None, db_id: str) -> Path | None:
    """``<root>/<db>/<db>.sqlite`` (Spider/BIRD layout); None when absent."""
    if db_root is None:
        return None
    for candidate in (db_root / db_id / f"{db_id}.sqlite", db_root / f"{db_id}.sqlite"):
        if candidate.is_file():
            return candidate
    return None


def _db_map(db_root: Path | None, db_ids: list[str]) -> dict[str, Path | None]:
    return {db_id: _find_db(db_root, db_id) for db_id in dict.fromkeys(db_ids)}


# --------------------------------------------------------------------------- Spider


def load_spider(
    data_dir: str | Path,
    split: str = "dev",
    *,
    question_field: str = "question",
    questions_file: str | Path | None = None,
    db_dir: str | Path | None = None,
    tables_file: str | Path | None = None,
) -> Dataset:
    """Spider-format questions (``dev.json``) with databases under ``database/``.

    Variants reuse the format: Spider-Syn (``question_field="SpiderSynQuestion"``),
    Spider-DK and Spider-Realistic (their own JSON file via ``questions_file``,
    the Spider ``database/`` folder via ``db_dir``). Ids are the 0-based
    positions in the file; hardness is computed from the gold SQL.
    """
    root = _require_dir(data_dir)
    qfile = Path(questions_file) if questions_file else _first_existing(
        root, [f"{split}.json", f"{split}_spider.json"], "Spider questions file"
    )
    rows = _read_json_list(qfile)
    db_root = Path(db_dir) if db_dir else next(
        (root / d for d in (f"{split}_database", "database") if (root / d).is_dir()), None
    )
    tfile = Path(tables_file) if tables_file else next(
        (root / t for t in (f"{split}_tables.json", "tables.json") if (root / t).is_file()), None
    )
    examples = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or question_field not in row:
            raise InputError(f"{qfile}: question {i} has no field {question_field!r}")
        gold = row.get("query") or row.get("SQL") or ""
        examples.append(Example(
            id=str(i), db_id=_db_id(row, qfile, i), question=row[question_field], gold=[gold],
            difficulty=spider_hardness(gold),
            extra={k: v for k, v in row.items()
                   if k not in ("sql", "query_toks", "query_toks_no_value", "question_toks")},
        ))
    return Dataset("spider", split, root, examples,
                   _db_map(db_root, [e.db_id for e in examples]), tfile)


# --------------------------------------------------------------------------- BIRD


def load_bird(
    data_dir: str | Path,
    split: str = "dev",
    *,
    questions_file: str | Path | None = None,
    db_dir: str | Path | None = None,
    tables_file: str | Path | None = None,
) -> Dataset:
    """BIRD ``dev.json`` (or Mini-Dev ``mini_dev_sqlite.json`` with ``split="mini_dev"``).

    Databases are looked up in ``dev_databases/<db>/<db>.sqlite`` (or
    ``<split>_databases``); ids are BIRD's ``question_id`` when present.
    """
    root = _require_dir(data_dir)
    names = [f"{split}.json"] + (["mini_dev_sqlite.json"] if split.startswith("mini") else [])
    qfile = Path(questions_file) if questions_file else _first_existing(
        root, names, "BIRD questions file")
    rows = _read_json_list(qfile)
    db_root = Path(db_dir) if db_dir else next(
        (root / d for d in (f"{split}_databases", "dev_databases", "databases")
         if (root / d).is_dir()), None)
    tfile = Path(tables_file) if tables_file else next(
        (root / t for t in (f"{split}_tables.json", "dev_tables.json", "tables.json")
         if (root / t).is_file()), None)
    examples = []
    for i, row in enumerate(rows):
        gold = row.get("SQL") or row.get("query") or ""
        qid = row.get("question_id", i)
        examples.append(Example(
            id=str(qid), db_id=_db_id(row, qfile, i), question=row.get("question", ""),
            gold=[gold],
            evidence=row.get("evidence") or "", difficulty=row.get("difficulty"),
            extra={k: v for k, v in row.items()
                   if k not in ("db_id", "question", "SQL", "evidence", "difficulty")},
        ))
    return Dataset("bird", split, root, examples,
                   _db_map(db_root, [e.db_id for e in examples]), tfile)


# --------------------------------------------------------------------------- spatial


def parse_qa_file(text: str) -> list[dict[str, str]]:
    """Records of a spatial ``QA-*.txt`` file as ``{field: value}`` dicts.

    Records are ``key:value`` lines separated by blank lines; a key seen twice
    also starts a new record; a line without a known ``key:`` continues the
    previous value.
    """
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    last_key: str | None = None
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.strip()
        if not line:
            if current:
                records.append(current)
            current, last_key = {}, None
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and (key in SPATIAL_FIELDS or re.fullmatch(r"[A-Za-z]+", key)):
            if key in current:
                records.append(current)
                current = {}
            current[key] = value.strip()
            last_key = key
        elif last_key is not None:
            current[last_key] = f"{current[last_key]} {line}".strip()
    if current:
        records.append(current)
    return records


def split_gold(sql: str) -> list[str]:
    """Gold alternatives of a ``%%%``-separated field, blanks dropped."""
    return [s.strip() for s in sql.split(GOLD_SEPARATOR) if s.strip()]


def _spatial_root(root: Path, split: str | None) -> Path:
    """The folder whose ``QA-*.txt`` files make up the split.

    ``root/<split>`` when it exists; else ``root`` itself when it (or its
    database subfolders) holds QA files; a root holding several datasets
    (``dataset1``, ``dataset2``) must be narrowed with ``split``.
    """
    if split and (root / split).is_dir():
        return root / split
    if any(root.glob("QA-*.txt")) or any(root.glob("*/QA-*.txt")):
        return root
    subsets = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*/QA-*.txt")))
    if subsets:
        raise InputError(f"{root} holds several spatial datasets; choose one with "
                         f"--split {'|'.join(subsets)}"
                         + (f" (no folder {split!r})" if split else ""))
    raise InputError(f"no QA-*.txt files under {root}")


def load_spatial(
    data_dir: str | Path,
    split: str | None = None,
    *,
    lang: str = "en",
    gold_field: str = "Eval",
) -> Dataset:
    """Spatial text-to-SQL QA (``<db>/QA-<db>-<n>.txt`` next to ``<db>/<db>.sqlite``).

    ``split`` picks a subfolder such as ``dataset1``; ``lang`` is ``en`` or
    ``zh`` (the ``*CHI`` fields). Gold alternatives come from ``Eval`` (the
    README: "SQL queries corresponding to all results"), falling back to
    ``SQL``; a prediction matching any of them is correct.
    """
    if lang not in ("en", "zh"):
        raise InputError(f"lang must be 'en' or 'zh', not {lang!r}")
    root = _spatial_root(_require_dir(data_dir), split)
    qa_files = sorted(root.glob("QA-*.txt")) + sorted(root.glob("*/QA-*.txt"))
    suffix = "CHI" if lang == "zh" else ""
    examples: list[Example] = []
    db_files: dict[str, Path | None] = {}
    for qa in qa_files:
        m = re.fullmatch(r"QA-(.+?)(?:-\d+)?\.txt", qa.name)
        db_id = m.group(1) if m else qa.parent.name
        db_file = qa.parent / f"{db_id}.sqlite"
        db_files[db_id] = db_file if db_file.is_file() else None
        for n, rec in enumerate(parse_qa_file(qa.read_text(encoding="utf-8-sig"))):
            gold = split_gold(rec.get(gold_field, "")) or split_gold(rec.get("SQL", ""))
            examples.append(Example(
                id=rec.get("id") or f"{db_id}-{n}", db_id=db_id,
                question=rec.get(f"question{suffix}", ""), gold=gold,
                evidence=rec.get(f"evidence{suffix}", ""),
                label=" ".join(rec.get("label", "").split()) or None,
                hints=rec.get(f"name{suffix}", ""),
                extra={"sql": split_gold(rec.get("SQL", "")), "lang": lang,
                       **{k: v for k, v in rec.items() if k not in SPATIAL_FIELDS}},
            ))
    label = split or root.name
    return Dataset("spatial", label, root, examples, db_files)


def load_dataset(name: str, data_dir: str | Path, split: str | None = None,
                 **options: Any) -> Dataset:
    """Dispatch on ``name`` (spider, bird, spatial); ``options`` go to the loader."""
    options = {k: v for k, v in options.items() if v is not None}
    if name == "spider":
        return load_spider(data_dir, split or "dev", **options)
    if name == "bird":
        return load_bird(data_dir, split or "dev", **options)
    if name == "spatial":
        return load_spatial(data_dir, split, **options)
    raise InputError(f"unknown dataset {name!r}: expected spider, bird or spatial")


# --------------------------------------------------------------------------- hardness


def _strip(node: exp.Expression | None) -> exp.Expression | None:
    while isinstance(node, (exp.Paren, exp.Alias)):
        node = node.this
    return node


def _is_query(node: exp.Expression | None) -> bool:
    node = _strip(node)
    return isinstance(node, (exp.Subquery, exp.Select, exp.Union, exp.Intersect, exp.Except))


def _conditions(node: exp.Expression | None) -> tuple[list[exp.Expression], int]:
    """Leaf conditions of an AND/OR tree and the number of ORs joining them."""
    node = _strip(node)
    if node is None:
        return [], 0
    if isinstance(node, exp.Connector):
        left, lor = _conditions(node.left)
        right, ror = _conditions(node.right)
        return left + right, lor + ror + int(isinstance(node, exp.Or))
    return [node], 0


def _negated(cond: exp.Expression) -> bool:
    """Spider's ``not_op``: NOT IN / NOT LIKE / NOT BETWEEN (not IS NOT NULL)."""
    if isinstance(cond, exp.Not):
        return not isinstance(_strip(cond.this), exp.Is)
    return bool(cond.args.get("negate"))


def _is_like(cond: exp.Expression) -> bool:
    inner = _strip(cond.this) if isinstance(cond, exp.Not) else cond
    return isinstance(inner, exp.Like)


def _nested_values(cond: exp.Expression) -> int:
    """Subqueries used as the value(s) of a condition (Spider's val1/val2)."""
    inner = _strip(cond.this) if isinstance(cond, exp.Not) else cond
    if isinstance(inner, exp.Exists):
        return 1
    if isinstance(inner, exp.In):
        return int(_is_query(inner.args.get("query"))
                   or any(_is_query(e) for e in inner.expressions))
    if isinstance(inner, exp.Between):
        return int(_is_query(inner.args.get("low"))) + int(_is_query(inner.args.get("high")))
    if isinstance(inner, exp.Binary):
        return int(_is_query(inner.expression))
    return 0


def _is_agg(node: exp.Expression | None) -> bool:
    return isinstance(_strip(node), exp.AggFunc)


def _leading_agg(node: exp.Expression | None) -> bool:
    """Spider sets a select item's agg only when the item starts with one."""
    node = _strip(node)
    while isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        node = _strip(node.left)
    return isinstance(node, exp.AggFunc)


def _agg_units(node: exp.Expression | None) -> int:
    """Aggregated column units of an ORDER BY value (at most two in Spider)."""
    node = _strip(node)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        return int(_is_agg(node.left)) + int(_is_agg(node.right))
    return int(_is_agg(node))


def spider_hardness_counts(sql: str) -> tuple[int, int, int] | None:
    """(component1, component2, others) of Spider's hardness rules, or None if unparsable."""
    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
        return None
    core = _strip(tree)
    set_ops = 0
    while isinstance(core, (exp.Union, exp.Intersect, exp.Except, exp.Subquery)):
        if not isinstance(core, exp.Subquery):
            set_ops = 1
        core = _strip(core.this)
    if not isinstance(core, exp.Select):
        return None
    where, where_or = _conditions(core.args["where"].this if core.args.get("where") else None)
    having, having_or = _conditions(core.args["having"].this if core.args.get("having") else None)
    on: list[exp.Expression] = []
    on_or = 0
    for join in core.args.get("joins") or []:
        conds, ors = _conditions(join.args.get("on"))
        on += conds
        on_or += ors
    group = core.args["group"].expressions if core.args.get("group") else []
    order = core.args["order"].expressions if core.args.get("order") else []
    tables = (1 if core.args.get("from_") or core.args.get("from") else 0) + len(
        core.args.get("joins") or [])

    comp1 = (bool(where) + bool(group) + bool(order) + bool(core.args.get("limit"))
             + max(tables - 1, 0) + on_or + where_or + having_or
             + sum(_is_like(c) for c in on + where + having))
    comp2 = sum(_nested_values(c) for c in on + where + having) + set_ops
    aggs = (sum(_leading_agg(e) for e in core.expressions)
            + sum(_negated(c) for c in where)
            + sum(_is_agg(g) for g in group)
            + sum(_agg_units(o.this if isinstance(o, exp.Ordered) else o) for o in order)
            # Spider counts every AND/OR joining HAVING conditions as an aggregate.
            + max(len(having) - 1, 0) + sum(_negated(c) for c in having))
    others = (int(aggs > 1) + int(len(core.expressions) > 1) + int(len(where) > 1)
              + int(len(group) > 1))
    return comp1, comp2, others


def classify_hardness(comp1: int, comp2: int, others: int) -> str:
    """Spider's easy/medium/hard/extra thresholds on the three counts."""
    if comp1 <= 1 and others == 0 and comp2 == 0:
        return "easy"
    if (others <= 2 and comp1 <= 1 and comp2 == 0) or (comp1 <= 2 and others < 2 and comp2 == 0):
        return "medium"
    if ((others > 2 and comp1 <= 2 and comp2 == 0)
            or (2 < comp1 <= 3 and others <= 2 and comp2 == 0)
            or (comp1 <= 1 and others == 0 and comp2 <= 1)):
        return "hard"
    return "extra"


def spider_hardness(sql: str) -> str | None:
    """Spider hardness of a gold query, or None when sqlglot cannot parse it."""
    counts = spider_hardness_counts(sql)
    return classify_hardness(*counts) if counts else None
