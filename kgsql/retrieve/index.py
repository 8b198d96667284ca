"""Packed token index of a database's documents, cached on disk as a sidecar ``.npz``.

All document token vectors live in one matrix; ``offsets[i]:offsets[i+1]``
are document i's rows. MaxSim against every document is then one matrix
product plus ``np.maximum.reduceat`` over the segments, with no Python loop
over columns.

The cache file name carries a hash of the encoder name and every document
text, so a changed description or a different model can never reuse stale
vectors, and an unchanged database is never re-encoded. A changed database
re-encodes only its changed documents: the vectors of every document whose
text is as before are taken from the database's last index (issue 33: one
changed table of a 30,000-column schema). Vectors are stored as
float16 (half the disk, no measurable ranking change); freshly built indexes
are rounded the same way so a cached run selects exactly what the first did.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kgsql.paths import cache_root, private_dir
from kgsql.retrieve.documents import Document
from kgsql.text.encoder import Encoder

INDEX_FORMAT = 1


def default_cache_dir() -> Path:
    """``$KGSQL_CACHE_DIR/retrieve`` or the platform's user cache dir."""
    return cache_root() / "retrieve"


def documents_key(encoder_name: str, docs: list[Document]) -> str:
    """Content hash of (index format, encoder, document keys and texts)."""
    h = hashlib.sha256(f"{INDEX_FORMAT}\n{encoder_name}\n".encode())
    for d in docs:
        h.update(f"{d.table}\x1f{d.column}\x1f{d.text}\x1e".encode())
    return h.hexdigest()[:20]


@dataclass
class TokenIndex:
    """Token vectors of all documents of one database, packed for vectorised MaxSim."""

    key: str
    encoder_name: str
    doc_keys: list[tuple[str, str | None]]  # (table, column or None for a table document)
    emb: np.ndarray  # float32 [n_tokens, dim], rows L2-normalised
    offsets: np.ndarray  # int64 [n_docs + 1]
    fields: np.ndarray  # int8 [n_tokens]: FIELD_* of each row
    pooled: np.ndarray  # float32 [n_docs, dim]: the encoder's pooled vector per document
    mean_tok: np.ndarray  # float32 [n_docs, dim]: L2-normalised mean of each doc's rows
    doc_hashes: tuple[str, ...] = ()  # per document: what its vectors depend on (:func:`document_hash`)

    @property
    def n_docs(self) -> int:
        return len(self.doc_keys)


def document_hash(doc: Document) -> str:
    """What one document's vectors depend on: its keys, text and field words (the encoder is the index's)."""
    h = hashlib.sha256(f"{doc.table}\x1f{doc.column}\x1f{doc.text}\x1f".encode())
    for words in doc.field_words:
        h.update(("\x1e" + "\x1f".join(sorted(words))).encode())
    return h.hexdigest()[:24]


def build_index(encoder: Encoder, docs: list[Document], key: str, previous: TokenIndex | None = None) -> TokenIndex:
    """Encode ``docs`` (tokens and pooled) and pack them; float16-rounded for cache parity. A document of
    ``previous`` (the same encoder's) with the same :func:`document_hash` is not encoded again."""
    hashes = [document_hash(d) for d in docs]
    kept: dict[str, int] = {}
    if previous is not None and previous.encoder_name == encoder.name:
        kept = {h: i for i, h in enumerate(previous.doc_hashes)}
    new = [i for i, h in enumerate(hashes) if h not in kept]
    toks, pooled_new = encoder.encode_documents([docs[i].text for i in new])
    encoded = {i: (t.vectors.astype(np.float16), np.array([docs[i].field_of(w) for w in t.tokens], dtype=np.int8),
                   pooled_new[n].astype(np.float16)) for n, (i, t) in enumerate(zip(new, toks))}
    rows, fields, pooled = [], [], []
    for i, h in enumerate(hashes):
        if i in encoded:
            vectors, field_rows, vector = encoded[i]
        else:
            j = kept[h]
            lo, hi = previous.offsets[j], previous.offsets[j + 1]  # type: ignore[union-attr]
            vectors = previous.emb[lo:hi].astype(np.float16)  # type: ignore[union-attr]
            field_rows = previous.fields[lo:hi]  # type: ignore[union-attr]
            vector = previous.pooled[j].astype(np.float16)  # type: ignore[union-attr]
        rows.append(vectors)
        fields.append(field_rows)
        pooled.append(vector)
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    emb = np.concatenate(rows) if rows else np.zeros((0, encoder.dim), np.float16)
    field_array = np.concatenate(fields) if fields else np.zeros(0, np.int8)
    pooled16 = np.stack(pooled) if pooled else np.zeros((0, encoder.dim), np.float16)
    return _finish(key, encoder.name, [(d.table, d.column) for d in docs], emb, offsets, field_array, pooled16,
                   tuple(hashes))


def _finish(key: str, encoder_name: str, doc_keys: list[tuple[str, str | None]], emb16: np.ndarray,
            offsets: np.ndarray, fields: np.ndarray, pooled16: np.ndarray,
            doc_hashes: tuple[str, ...] = ()) -> TokenIndex:
    emb = emb16.astype(np.float32)
    n = len(doc_keys)
    mean_tok = np.zeros((n, emb.shape[1]), dtype=np.float32)
    if n:
        mean_tok = np.add.reduceat(emb, offsets[:-1], axis=0)
        mean_tok /= np.maximum(np.linalg.norm(mean_tok, axis=1, keepdims=True), 1e-12)
    return TokenIndex(key, encoder_name, doc_keys, emb, offsets, fields, pooled16.astype(np.float32), mean_tok,
                      doc_hashes)


def _cache_path(cache_dir: Path, db_name: str, key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", db_name)[:60] or "db"
    return cache_dir / f"{safe}-{key}.npz"


def save_index(index: TokenIndex, path: Path) -> None:
    """Write atomically (temp file + rename) so concurrent readers never see half a file.

    The folder is private (0700) and the file 0600: mkstemp creates it so, and
    np.savez and the rename keep the mode.
    """
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
    os.close(fd)
    try:
        np.savez(
            tmp,
            emb=index.emb.astype(np.float16),
            offsets=index.offsets,
            fields=index.fields,
            pooled=index.pooled.astype(np.float16),
            meta=np.frombuffer(
                json.dumps({"key": index.key, "encoder": index.encoder_name, "doc_keys": index.doc_keys,
                            "doc_hashes": list(index.doc_hashes)}).encode(),
                dtype=np.uint8,
            ),
        )
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_index(path: Path) -> TokenIndex | None:
    """The cached index at ``path``, or None when missing or unreadable."""
    try:
        with np.load(path) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            doc_keys = [(t, c) for t, c in meta["doc_keys"]]
            return _finish(meta["key"], meta["encoder"], doc_keys, z["emb"], z["offsets"], z["fields"], z["pooled"],
                           tuple(meta.get("doc_hashes", ())))  # files before the hashes: nothing reused
    except (OSError, ValueError, KeyError):
        return None


class IndexStore:
    """Gets the token index of a document set: memory, then disk cache, then encode.

    ``encoded`` counts actual encodings, which is what tests check to prove
    a second run reuses the cache.
    """

    def __init__(self, encoder: Encoder, cache_dir: str | os.PathLike[str] | None = None, *, use_disk: bool = True) -> None:
        self.encoder = encoder
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.use_disk = use_disk
        self._memory: dict[str, TokenIndex] = {}
        self.encoded = 0

    def get(self, db_name: str, docs: list[Document]) -> TokenIndex:
        key = documents_key(self.encoder.name, docs)
        if key in self._memory:
            return self._memory[key]
        path = _cache_path(self.cache_dir, db_name, key)
        index = load_index(path) if self.use_disk else None
        if index is None or index.key != key:
            index = build_index(self.encoder, docs, key, previous=self._latest(db_name) if self.use_disk else None)
            self.encoded += 1
            if self.use_disk:
                try:
                    save_index(index, path)
                except OSError:  # a read-only cache dir only costs re-encoding next time
                    pass
        self._memory[key] = index
        return index

    def _latest(self, db_name: str) -> TokenIndex | None:
        """The newest cached index of ``db_name`` (any content), whose unchanged documents need no encoding."""
        own = re.compile(re.escape(_cache_path(self.cache_dir, db_name, "").name[:-len(".npz")]) + r"[0-9a-f]{20}\.npz")
        newest: tuple[float, Path] | None = None
        try:
            for path in self.cache_dir.iterdir():
                if own.fullmatch(path.name):
                    stamp = path.stat().st_mtime
                    newest = (stamp, path) if newest is None or stamp > newest[0] else newest
        except OSError:  # no cache folder yet, or a file removed meanwhile
            return None
        return load_index(newest[1]) if newest is not None else None
