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
float16, on disk and in memory (half of each, no measurable ranking change), so
a cached run selects exactly what the first did; MaxSim multiplies in float32
(:attr:`TokenIndex.emb32`, or only the candidates' rows on a wide database).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from functools import lru_cache
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
    emb: np.ndarray  # float16 [n_tokens, dim], rows L2-normalised (as stored: half the memory)
    offsets: np.ndarray  # int64 [n_docs + 1]
    fields: np.ndarray  # int8 [n_tokens]: FIELD_* of each row
    pooled: np.ndarray  # float32 [n_docs, dim]: the encoder's pooled vector per document
    mean_tok: np.ndarray  # float32 [n_docs, dim]: L2-normalised mean of each doc's rows
    doc_hashes: tuple[str, ...] = ()  # per document: what its vectors depend on (:func:`document_hash`)
    _emb32: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n_docs(self) -> int:
        return len(self.doc_keys)

    @property
    def emb32(self) -> np.ndarray:
        """``emb`` as float32, made on first use: the exact MaxSim of a database below the pruning limit
        multiplies all of it. A wide database's candidates convert only their own rows (``rows32``)."""
        if self._emb32 is None:
            self._emb32 = self.emb.astype(np.float32)
        return self._emb32

    def rows32(self, rows: np.ndarray | slice) -> np.ndarray:
        """Some token rows as float32."""
        return (self._emb32 if self._emb32 is not None else self.emb)[rows].astype(np.float32, copy=False)


@lru_cache(maxsize=1 << 17)  # documents are shared objects (kgsql.retrieve.documents): re-hashing 30,000 is 0.15 s
def document_hash(doc: Document) -> str:
    """What one document's vectors depend on: its keys, text and field words (the encoder is the index's)."""
    h = hashlib.sha256(f"{doc.table}\x1f{doc.column}\x1f{doc.text}\x1f".encode())
    for words in doc.field_words:
        h.update(("\x1e" + "\x1f".join(sorted(words))).encode())
    return h.hexdigest()[:24]


#: Indexes a database keeps in memory (see :class:`IndexStore`).
KEPT_PER_DATABASE = 2
#: Token rows above which an index file is written in the background (about 2,000 columns).
WRITE_BEHIND_ROWS = 20_000
#: Documents encoded per encoder call: the transformer's outputs of a whole 30,000-column schema at once
#: held 3.9 GB; a chunk's are packed (float16) before the next is encoded.
ENCODE_CHUNK = 2048


def build_index(encoder: Encoder, docs: list[Document], key: str, previous: TokenIndex | None = None) -> TokenIndex:
    """Encode ``docs`` (tokens and pooled) and pack them; float16-rounded for cache parity. A document of
    ``previous`` (the same encoder's) with the same :func:`document_hash` is not encoded again: its rows
    are copied in a few slices, so re-indexing one changed table of a wide schema costs that table."""
    hashes = [document_hash(d) for d in docs]
    kept: dict[str, int] = {}
    if previous is not None and previous.encoder_name == encoder.document_name and previous.doc_hashes:
        kept = {h: i for i, h in enumerate(previous.doc_hashes)}
    new = [i for i, h in enumerate(hashes) if h not in kept]
    encoded: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for start in range(0, len(new), ENCODE_CHUNK):
        part = new[start:start + ENCODE_CHUNK]
        toks, pooled_part = encoder.encode_documents([docs[i].text for i in part])
        for n, (i, t) in enumerate(zip(part, toks)):
            encoded[i] = (t.vectors.astype(np.float16), np.array([docs[i].field_of(w) for w in t.tokens], np.int8),
                          pooled_part[n].astype(np.float16))
    old = [i for i, h in enumerate(hashes) if h in kept]
    src = np.array([kept[hashes[i]] for i in old], dtype=np.int64)
    lengths = np.zeros(len(docs), dtype=np.int64)
    for i, (vectors, _, _) in encoded.items():
        lengths[i] = len(vectors)
    if old:
        lengths[old] = np.diff(previous.offsets)[src]  # type: ignore[union-attr]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n, dim = len(docs), encoder.dim
    emb = np.empty((int(offsets[-1]), dim), dtype=np.float16)
    fields = np.empty(int(offsets[-1]), dtype=np.int8)
    pooled = np.empty((n, dim), dtype=np.float32)
    mean_tok = np.empty((n, dim), dtype=np.float32)
    for i, (vectors, field_rows, vector) in encoded.items():
        emb[offsets[i]:offsets[i + 1]] = vectors
        fields[offsets[i]:offsets[i + 1]] = field_rows
        pooled[i] = vector
        mean_tok[i] = _mean_row(emb[offsets[i]:offsets[i + 1]].astype(np.float32))
    if old:
        assert previous is not None
        for to, start, n_rows in _runs(offsets[old], previous.offsets[src], lengths[old]):
            emb[to:to + n_rows] = previous.emb[start:start + n_rows]
            fields[to:to + n_rows] = previous.fields[start:start + n_rows]
        pooled[old] = previous.pooled[src]
        mean_tok[old] = previous.mean_tok[src]
    return TokenIndex(key, encoder.document_name, [(d.table, d.column) for d in docs], emb, offsets, fields, pooled,
                      mean_tok, tuple(hashes))


def _mean_row(rows: np.ndarray) -> np.ndarray:
    """The L2-normalised mean of a document's token rows (the first stage's document vector)."""
    total = rows.sum(axis=0)
    return total / max(float(np.linalg.norm(total)), 1e-12)


def _mean_rows(emb: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`_mean_row` of every document (for an index file written before they were stored)."""
    out = np.zeros((len(offsets) - 1, emb.shape[1]), dtype=np.float32)
    for i, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:])):
        out[i] = _mean_row(emb[lo:hi].astype(np.float32))
    return out


def _runs(to_starts: np.ndarray, from_starts: np.ndarray, lengths: np.ndarray) -> list[list[int]]:
    """Segments (``lengths`` rows from ``from_starts`` to ``to_starts``) merged where they follow each other
    in both indexes: after one changed table a handful of slice copies instead of a gather of every row."""
    runs: list[list[int]] = []
    for to, start, n_rows in zip(to_starts.tolist(), from_starts.tolist(), lengths.tolist()):
        if runs and runs[-1][0] + runs[-1][2] == to and runs[-1][1] + runs[-1][2] == start:
            runs[-1][2] += n_rows
        else:
            runs.append([to, start, n_rows])
    return runs


def _save_quietly(index: TokenIndex, path: Path) -> None:
    try:
        save_index(index, path)
    except OSError:  # a read-only cache dir only costs re-encoding next time
        pass


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
            emb=index.emb,
            offsets=index.offsets,
            fields=index.fields,
            pooled=index.pooled.astype(np.float16),
            mean_tok=index.mean_tok,
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
            emb, offsets = z["emb"].astype(np.float16, copy=False), z["offsets"]
            mean_tok = z["mean_tok"] if "mean_tok" in z.files else _mean_rows(emb, offsets)
            return TokenIndex(meta["key"], meta["encoder"], [(t, c) for t, c in meta["doc_keys"]], emb, offsets,
                              z["fields"], z["pooled"].astype(np.float32), mean_tok.astype(np.float32),
                              tuple(meta.get("doc_hashes", ())))  # files before the hashes: nothing reused
    except (OSError, ValueError, KeyError):
        return None


class IndexStore:
    """Gets the token index of a document set: memory, then disk cache, then encode.

    Memory keeps the last ``KEPT_PER_DATABASE`` indexes of a database (a warm
    service re-ingesting a wide schema kept every version; two, so callers
    alternating between two forms of one schema do not re-read the disk);
    the newest is the one whose unchanged documents a new index copies,
    without reading the disk. An index of more than ``WRITE_BEHIND_ROWS``
    token rows is written to disk by a background thread, so a re-index is
    done when its vectors are (the write of a 30,000-column index takes a
    second); the process waits for the write before it exits. ``encoded``
    counts actual encodings, which is what tests check to prove a second run
    reuses the cache.
    """

    def __init__(self, encoder: Encoder, cache_dir: str | os.PathLike[str] | None = None, *, use_disk: bool = True) -> None:
        self.encoder = encoder
        self.cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.use_disk = use_disk
        self._memory: dict[str, list[TokenIndex]] = {}  # database name -> its indexes, newest last
        self._writes: list[threading.Thread] = []
        self.encoded = 0

    def get(self, db_name: str, docs: list[Document]) -> TokenIndex:
        key = documents_key(self.encoder.document_name, docs)
        held = self._memory.setdefault(db_name, [])
        index = next((i for i in held if i.key == key), None)
        if index is None:
            path = _cache_path(self.cache_dir, db_name, key)
            index = load_index(path) if self.use_disk else None
            if index is None or index.key != key:
                previous = held[-1] if held else self._latest(db_name) if self.use_disk else None
                index = build_index(self.encoder, docs, key, previous=previous)
                self.encoded += 1
                if self.use_disk:
                    self._save(index, path)
        else:
            held.remove(index)
        held.append(index)
        del held[:-KEPT_PER_DATABASE]
        return index

    def _save(self, index: TokenIndex, path: Path) -> None:
        if len(index.emb) <= WRITE_BEHIND_ROWS:
            _save_quietly(index, path)
            return
        self._writes = [t for t in self._writes if t.is_alive()]
        thread = threading.Thread(target=_save_quietly, args=(index, path), name=f"kgsql-index-{path.name}")
        thread.start()  # not a daemon: the interpreter waits for the file at exit
        self._writes.append(thread)

    def wait(self) -> None:
        """Until every index file this store is writing is on disk."""
        for thread in self._writes:
            thread.join()
        self._writes = []

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
