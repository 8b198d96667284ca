"""Spatial text-to-SQL QA (SSpa's set): ``<split>/<db>/QA-<db>-<n>.txt`` beside ``<db>.sqlite``."""
from __future__ import annotations

import re
from pathlib import Path

from kgsql.errors import InputError
from kgsql.eval.datasets.base import Benchmark, Dataset, GoldQuestion, require_dir

NAME = "spatial"
LANGUAGES = ("en", "zh")  # zh: the *CHI fields
GOLD_SEPARATOR = "%%%"
SPATIAL_FIELDS = (
    "label", "questionCHI", "evidenceCHI", "nameCHI",
    "question", "evidence", "name", "SQL", "Eval", "id",
)
# Spatial label tags (README of the spatial dataset plus the QA files):
# G = answerable by a general (non-spatial) query, S = by a spatial query,
# Region = restricted to an area, Intersection = needs a geometry intersection.
SPATIAL_TAGS = ("G", "S", "Region", "Intersection")


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


def find_splits(root: Path) -> list[str]:
    """The spatial datasets under ``root`` (``dataset1``, ``dataset2``): folders of database folders."""
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*/QA-*.txt")))


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
    subsets = find_splits(root)
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
    if lang not in LANGUAGES:
        raise InputError(f"lang must be {' or '.join(map(repr, LANGUAGES))}, not {lang!r}")
    root = _spatial_root(require_dir(data_dir), split)
    qa_files = sorted(root.glob("QA-*.txt")) + sorted(root.glob("*/QA-*.txt"))
    suffix = "CHI" if lang == "zh" else ""
    questions: list[GoldQuestion] = []
    db_files: dict[str, Path | None] = {}
    for qa in qa_files:
        m = re.fullmatch(r"QA-(.+?)(?:-\d+)?\.txt", qa.name)
        db_id = m.group(1) if m else qa.parent.name
        db_file = qa.parent / f"{db_id}.sqlite"
        db_files[db_id] = db_file if db_file.is_file() else None
        for n, rec in enumerate(parse_qa_file(qa.read_text(encoding="utf-8-sig"))):
            gold = split_gold(rec.get(gold_field, "")) or split_gold(rec.get("SQL", ""))
            questions.append(GoldQuestion(
                id=rec.get("id") or f"{db_id}-{n}", db_id=db_id,
                question=rec.get(f"question{suffix}", ""), gold=gold,
                evidence=rec.get(f"evidence{suffix}", ""),
                label=" ".join(rec.get("label", "").split()) or None,
                hints=rec.get(f"name{suffix}", ""),
                extra={"sql": split_gold(rec.get("SQL", "")), "lang": lang,
                       **{k: v for k, v in rec.items() if k not in SPATIAL_FIELDS}},
            ))
    label = split or root.name
    return Dataset(NAME, label, root, questions, db_files)


BENCHMARK = Benchmark(
    NAME, load_spatial, "spatial QA over SpatiaLite databases (SSpa): dataset1 / dataset2, English or Chinese",
    splits=("dataset1", "dataset2"), default_split=None,
    metric="spider_ex", timeout_s=120.0,  # one tourism gold query alone takes ~25 s (docs/eval.md)
    pool_from_other_databases=True, pool_note="the other databases of the split",
    cross_fold=True, find_splits=find_splits,
    split_in_graph_name=True,  # traffic of dataset1 keeps derived columns, dataset2's does not
    languages=LANGUAGES, schema_source="sqlite",
)
