"""The database-level index: every database's routing document and table vectors, cached privately.

A database's entry is keyed by its name and content hash (the ``Database`` node's
``content_hash``, which changes whenever ingest writes something new), the document
format and the encoder, and kept as one small ``.npz`` under ``<cache>/route/``
(``KGSQL_CACHE_DIR``; folder 0700, files 0600). Building the index for a graph reads
only the databases whose entry is missing: an unchanged graph loads in milliseconds,
a newly ingested database costs its own encoding and one read of its stored text values
(``kgsql.route.named``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from kgsql.paths import cache_root, private_dir
from kgsql.route.documents import DOCUMENT_FORMAT, DatabaseDocument, database_document
from kgsql.route.named import database_values
from kgsql.schema.model import DatabaseSchema
from kgsql.text.encoder import Encoder


@dataclass
class DatabaseIndex:
    """Documents of all databases, with their table vectors stacked for one matrix product."""

    documents: list[DatabaseDocument]
    table_vectors: np.ndarray  # float32 [n_tables, dim], rows L2-normalised
    table_owner: np.ndarray  # int64 [n_tables]: the document each row belongs to
    encoded: int = 0  # databases encoded while building (the rest came from the cache)

    @property
    def names(self) -> list[str]:
        return [d.name for d in self.documents]


def default_cache_dir() -> Path:
    return cache_root() / "route"


def entry_key(encoder_name: str, digest: str) -> str:
    return hashlib.sha256(f"{DOCUMENT_FORMAT}\n{encoder_name}\n{digest}".encode()).hexdigest()[:20]


def entry_path(cache_dir: Path, name: str, key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "db"
    return cache_dir / f"{safe}-{key}.npz"


def _load(path: Path, name: str, digest: str) -> tuple[DatabaseDocument, np.ndarray] | None:
    entry = load_entry(path)
    if entry is None:
        return None
    try:
        doc = DatabaseDocument.from_dict(entry[1])
    except (KeyError, TypeError, ValueError):
        return None
    return (doc, entry[0]) if (doc.name, doc.digest) == (name, digest) else None


def save_vectors(path: Path, vectors: np.ndarray, meta: dict | None = None) -> None:
    """Vectors (float16) and an optional JSON ``meta`` in one ``.npz``: atomic (temp file + rename) and
    private; a read-only cache only costs encoding again."""
    try:
        private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
        os.close(fd)
        try:
            np.savez(tmp, vectors=vectors.astype(np.float16),
                     meta=np.frombuffer(json.dumps(meta or {}).encode(), dtype=np.uint8))
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        pass


def load_entry(path: Path) -> tuple[np.ndarray, dict] | None:
    """The vectors (float32) and the ``meta`` :func:`save_vectors` wrote, or None when the file is missing or
    unreadable."""
    try:
        with np.load(path) as z:
            vectors, meta = z["vectors"].astype(np.float32), json.loads(bytes(z["meta"]).decode())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # missing, empty, cut short, not ours
        return None
    return (vectors, meta) if isinstance(meta, dict) and vectors.ndim == 2 else None


def build_index(encoder: Encoder, databases: list[tuple[str, str]], load_schema: Callable[[str], DatabaseSchema],
                *, cache_dir: Path | None = None, use_cache: bool = True) -> DatabaseIndex:
    """The index of ``databases`` ((name, content hash) pairs); ``load_schema(name)`` is called only for
    databases not cached yet."""
    folder = cache_dir or default_cache_dir()
    found: dict[str, tuple[DatabaseDocument, np.ndarray]] = {}
    missing: list[tuple[str, str]] = []
    for name, digest in databases:
        path = entry_path(folder, name, entry_key(encoder.name, digest))
        hit = _load(path, name, digest) if use_cache else None
        if hit is None:
            missing.append((name, digest))
        else:
            found[name] = hit
    if missing:
        vocabulary = encoder_vocabulary(encoder)
        docs = []
        for name, digest in missing:
            schema = load_schema(name)
            docs.append(database_document(schema, digest, vocabulary, database_values(schema)))
        texts = [t for d in docs for t in (d.tables or [d.name])]
        vectors = encoder.encode_pooled(texts, is_query=False).astype(np.float16).astype(np.float32)
        start = 0
        for doc in docs:
            n = len(doc.tables or [doc.name])
            found[doc.name] = (doc, vectors[start:start + n])
            start += n
            if use_cache:
                save_vectors(entry_path(folder, doc.name, entry_key(encoder.name, doc.digest)), found[doc.name][1],
                             meta=doc.to_dict())
    documents = [found[name][0] for name, _ in databases]
    blocks = [found[name][1] for name, _ in databases]
    owner = np.concatenate([np.full(len(b), i, dtype=np.int64) for i, b in enumerate(blocks)]) if blocks \
        else np.zeros(0, np.int64)
    stacked = np.concatenate(blocks) if blocks else np.zeros((0, encoder.dim), np.float32)
    return DatabaseIndex(documents, stacked, owner, encoded=len(missing))


def encoder_vocabulary(encoder: Encoder) -> frozenset[str]:
    """The whole words of the encoder's tokenizer (English enough to segment ``countrylanguage``); none
    for an encoder without one."""
    vocab = getattr(getattr(encoder, "tokenizer", None), "vocab", None) or {}
    return frozenset(w for w in vocab if w.isalpha() and w.isascii() and len(w) > 2)


def graph_databases(store: object) -> list[tuple[str, str]]:
    """(name, content hash) of every database in the graph behind ``store`` (a ``GraphStore``)."""
    rows = store.run("database_digests")  # type: ignore[attr-defined]
    return [(r["name"], str(r.get("content_hash") or "")) for r in rows]
