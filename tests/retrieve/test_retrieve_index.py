"""Encoder seam, packed index, MaxSim, and the encoding cache."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgsql.retrieve.documents import schema_documents
from kgsql.text.encoder import (
    ColbertAIEncoder, EncoderUnavailableError, HashEncoder, PylateEncoder, content_rows, get_encoder,
)
from kgsql.retrieve.index import IndexStore, documents_key
from kgsql.retrieve.late_interaction import late_interaction, maxsim_all, maxsim_subset
from kgsql.text.words import identifier_words, split_identifier


@pytest.mark.parametrize("name,words", [
    ("NumGE1500", ["num", "ge", "1500"]),
    ("CDSCode", ["cds", "code"]),
    ("home_city", ["home", "city"]),
    ("customerID", ["customer", "id"]),
    ("Free Meal Count (K-12)", ["free", "meal", "count", "k", "12"]),
])
def test_split_identifier(name: str, words: list[str]) -> None:
    assert split_identifier(name) == words


def test_abbreviations_expanded() -> None:
    assert "(date of birth)" in identifier_words("dob")
    assert identifier_words("dept_name").startswith("dept (department) name")


def test_content_rows_keep_whole_words() -> None:
    rows, words = content_rows(["what", "is", "the", "num", "##ge", "count", "?"])
    assert rows == [3, 4, 5] and words == ["numge", "numge", "count"]


def test_minilm_token_embeddings(minilm) -> None:  # type: ignore[no-untyped-def]
    te = minilm.encode_tokens(["What is the average salary of employees?", "the of"], is_query=True)
    assert te[0].vectors.shape[1] == minilm.dim == 384
    assert "the" not in te[0].tokens and "salary" in te[0].tokens  # stop words and specials dropped
    np.testing.assert_allclose(np.linalg.norm(te[0].vectors, axis=1), 1.0, atol=1e-5)
    assert len(te[1].vectors) >= 1  # a stop-word-only text still has vectors
    pooled = minilm.encode_pooled(["a", "b"])
    assert pooled.shape == (2, 384)


DOCUMENT_TEXTS = ["name of the singer", "total amount paid in euros; values: 12.5, 40", "and the of", ""]


def test_documents_encoded_once_give_what_the_two_calls_give(minilm, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Indexing runs the model once per document for both kinds of vector (issue 33's index time)."""
    monkeypatch.setattr(minilm, "bf16_documents", False)
    texts = DOCUMENT_TEXTS
    tokens, pooled = minilm.encode_documents(texts)
    apart = minilm.encode_tokens(texts)
    assert [t.tokens for t in tokens] == [t.tokens for t in apart]
    assert all(np.array_equal(a.vectors, b.vectors) for a, b in zip(tokens, apart))
    assert np.array_equal(pooled, minilm.encode_pooled(texts))
    hashed = HashEncoder(64)  # the default pairing of the two calls
    assert np.array_equal(hashed.encode_documents(texts)[1], hashed.encode_pooled(texts))


def test_bfloat16_documents_stay_within_rounding_of_float32(minilm, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The bfloat16 document pass (index time, issue 33) gives the same tokens and nearly the same vectors,
    and keys its indexes apart from float32 ones."""
    monkeypatch.setattr(minilm, "bf16_documents", False)
    exact_tokens, exact_pooled = minilm.encode_documents(DOCUMENT_TEXTS)
    name = minilm.document_name
    monkeypatch.setattr(minilm, "bf16_documents", True)
    tokens, pooled = minilm.encode_documents(DOCUMENT_TEXTS)
    assert minilm.document_name == f"{name}:bf16" and name == minilm.name
    assert [t.tokens for t in tokens] == [t.tokens for t in exact_tokens]
    for a, b in zip(tokens, exact_tokens):
        assert np.all((a.vectors * b.vectors).sum(axis=1) > 0.999)
    assert np.all((pooled * exact_pooled).sum(axis=1) > 0.999)


def test_optional_colbert_encoders_fail_clearly() -> None:
    try:
        import pylate  # noqa: F401
    except ImportError:
        with pytest.raises(EncoderUnavailableError, match="kgsql\\[colbert\\]"):
            PylateEncoder("some/checkpoint")
    import transformers

    if int(transformers.__version__.split(".")[0]) >= 5:
        with pytest.raises(EncoderUnavailableError, match="transformers 5"):
            ColbertAIEncoder("some/checkpoint")
    with pytest.raises(EncoderUnavailableError, match="unknown encoder"):
        get_encoder("nope")


def test_maxsim_vectorised_matches_loop(school) -> None:  # type: ignore[no-untyped-def]
    enc = HashEncoder()
    docs = schema_documents(school)
    store = IndexStore(enc, use_disk=False)
    index = store.get("school", docs)
    q = enc.encode_tokens(["students home city"], is_query=True)[0].vectors
    fast = maxsim_all(q, index)
    for d in range(index.n_docs):
        rows = index.emb[index.offsets[d]: index.offsets[d + 1]]
        np.testing.assert_allclose(fast[:, d], (q @ rows.T).max(axis=1), rtol=1e-6)
    subset = np.array([3, 0, 7])
    np.testing.assert_allclose(maxsim_subset(q, index, subset), fast[:, subset], rtol=1e-6)
    pruned = late_interaction(q, index, exact_limit=0, candidates=4)
    kept = ~np.isnan(pruned.per_token[0])
    assert kept.sum() >= 4
    np.testing.assert_allclose(pruned.per_token[:, kept], fast[:, kept], rtol=1e-6)


def test_encoding_cache_reused(minilm, school, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from kgsql.retrieve import SchemaRetriever

    first = SchemaRetriever(minilm, cache_dir=tmp_path)
    a = first.select(school, "Which building has the most floors?")
    assert first.store.encoded == 1
    assert len(list(tmp_path.glob("school-*.npz"))) == 1
    second = SchemaRetriever(minilm, cache_dir=tmp_path)
    b = second.select(school, "Which building has the most floors?")
    assert second.store.encoded == 0  # loaded from the sidecar index, not re-encoded
    assert a.to_dict() == b.to_dict()
    # a changed description changes the documents, hence the key: re-encoded
    school.table("rooms").column("capacity").description = "number of seats"
    third = SchemaRetriever(minilm, cache_dir=tmp_path)
    third.select(school, "Which building has the most floors?")
    assert third.store.encoded == 1


class CountingEncoder(HashEncoder):
    """A hash encoder that counts the documents it encodes."""

    def __init__(self) -> None:
        super().__init__(64)
        self.documents = 0

    def encode_documents(self, texts):  # type: ignore[no-untyped-def]
        self.documents += len(texts)
        return super().encode_documents(texts)


def test_a_changed_table_alone_is_encoded_again(school, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Re-indexing after one table changed encodes only that table's documents (issue 33), and the index is
    the one a fresh build gives."""
    import dataclasses

    encoder = CountingEncoder()
    IndexStore(encoder, tmp_path).get("school", schema_documents(school))
    everything = encoder.documents
    first = school.tables[0]
    changed = dataclasses.replace(school, tables=[dataclasses.replace(first, description="where pupils live"),
                                                  *school.tables[1:]])
    docs = schema_documents(changed)
    encoder.documents = 0
    incremental = IndexStore(encoder, tmp_path).get("school", docs)
    assert 0 < encoder.documents <= 1 + len(first.columns) < everything  # the table's document and its columns'
    fresh = IndexStore(CountingEncoder(), tmp_path / "fresh").get("school", docs)
    for name in ("emb", "offsets", "fields", "pooled", "mean_tok"):
        assert np.array_equal(getattr(incremental, name), getattr(fresh, name)), name
    assert incremental.doc_hashes == fresh.doc_hashes and incremental.key == fresh.key
    encoder.documents = 0
    IndexStore(encoder, tmp_path).get("school_2", docs)  # another database's index is not this one's
    assert encoder.documents == everything


def test_a_warm_store_reindexes_from_memory_and_keeps_two_indexes_a_database(school, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Without the disk cache, the index in memory is the previous one (only the changed table is encoded);
    a database keeps its last two indexes, older ones are let go; an index file without stored mean
    vectors loads to the same ones."""
    import dataclasses

    from kgsql.retrieve.index import load_index, save_index

    encoder = CountingEncoder()
    store = IndexStore(encoder, tmp_path, use_disk=False)
    before = store.get("school", schema_documents(school))
    first = school.tables[0]
    changed = dataclasses.replace(school, tables=[dataclasses.replace(first, description="where pupils live"),
                                                  *school.tables[1:]])
    encoder.documents = 0
    after = store.get("school", schema_documents(changed))
    assert 0 < encoder.documents <= 1 + len(first.columns)
    assert store.get("school", schema_documents(changed)) is after
    assert store.get("school", schema_documents(school)) is before and before.key != after.key
    third = dataclasses.replace(school, tables=[dataclasses.replace(first, description="houses"), *school.tables[1:]])
    store.get("school", schema_documents(third))
    encoder.documents = 0
    assert store.get("school", schema_documents(school)) is before  # kept: it was asked for last
    assert store.get("school", schema_documents(changed)) is not after and encoder.documents > 0  # let go
    assert not list(tmp_path.glob("*.npz"))
    path = tmp_path / "school.npz"
    save_index(after, path)
    with np.load(path) as z:  # as written before the mean vectors were kept
        np.savez(tmp_path / "old.npz", **{k: z[k] for k in z.files if k != "mean_tok"})
    old = load_index(tmp_path / "old.npz")
    assert old is not None and np.array_equal(old.mean_tok, after.mean_tok) and np.array_equal(old.emb, after.emb)


def test_documents_key_depends_on_encoder_and_text(school) -> None:  # type: ignore[no-untyped-def]
    docs = schema_documents(school)
    assert documents_key("a", docs) != documents_key("b", docs)
    assert documents_key("a", docs) == documents_key("a", schema_documents(school))
    col_doc = next(d for d in docs if d.column == "sc_avg")
    assert "grade point average" in col_doc.text and "students" in col_doc.text


def test_table_features_vectorised_matches_reference(school) -> None:  # type: ignore[no-untyped-def]
    from kgsql.retrieve.features import SchemaFacts, table_features, table_features_reference

    school.tables.append(type(school.tables[0])(name="empty_table"))  # a table without columns
    facts = SchemaFacts.from_schema(school)
    rng = np.random.default_rng(0)
    feats = rng.normal(size=(len(facts.column_keys), 15))
    p = rng.random(len(facts.column_keys))
    np.testing.assert_allclose(table_features(feats, p, facts), table_features_reference(feats, p, facts))


def test_lexical_coverage(school) -> None:  # type: ignore[no-untyped-def]
    from kgsql.retrieve.features import SchemaFacts

    facts = SchemaFacts.from_schema(school)
    cov = dict(zip(facts.column_keys, facts.column_coverage({"home", "city", "credit"})))
    assert cov[("students", "home_city")] == 1.0
    assert cov[("courses", "credits")] == 1.0  # plural folded
    assert cov[("students", "full_name")] == 0.0


def test_no_progress_bar_warning_in_a_notebook_without_ipywidgets() -> None:
    """Issue 30, item 8: in a Jupyter kernel without ipywidgets, loading the encoder printed tqdm's
    'IProgress not found' warning. Run in a fresh interpreter that looks like such a kernel."""
    import subprocess
    import sys

    probe = (
        "import sys, types, warnings\n"
        "sys.modules['ipykernel.zmqshell'] = types.ModuleType('ipykernel.zmqshell')\n"
        "ipython = types.ModuleType('IPython')\n"
        "class ZMQInteractiveShell: pass\n"
        "ipython.get_ipython = lambda: ZMQInteractiveShell()\n"
        "sys.modules['IPython'] = ipython\n"
        "sys.modules['ipywidgets'] = None\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    from kgsql.text.encoder import MiniLMEncoder\n"
        "    MiniLMEncoder()\n"
        "print(sum('IProgress' in str(w.message) for w in seen))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0"


def test_thresholds_shrink_on_a_schema_wider_than_wide_tables(tmp_path: Path) -> None:
    """Issue 33: on one schema of hundreds of tables the calibrated probabilities fall, so the thresholds
    shrink with the square of the width; a database of up to ``wide_tables`` tables is selected as before."""
    from kgsql.lab.bench_wide import synthetic_schema
    from kgsql.retrieve import SchemaRetriever
    from kgsql.retrieve.retriever import SelectionConfig

    config = SelectionConfig()
    assert config.scale(config.wide_tables) == 1.0 and config.scale(2 * config.wide_tables) == 0.25
    assert SelectionConfig(wide_tables=0).scale(10_000) == 1.0
    wide = synthetic_schema(400 * 5, per_table=5)  # 400 tables: the thresholds at 4 %
    scaled = SchemaRetriever(HashEncoder(), cache_dir=tmp_path)
    unscaled = scaled.with_config(wide_tables=0)
    question = "What is the total amount of each customer order?"
    widened = scaled.select(wide, question)
    assert len(widened.columns) > len(unscaled.select(wide, question).columns)
    capped = scaled.with_config(wide_max_tables=2, wide_max_columns=3).select(wide, question)  # the likeliest only
    assert len(capped.columns) < len(widened.columns)
    narrow = synthetic_schema(60 * 10, per_table=10)  # 60 tables: no change
    assert scaled.select(narrow, question).columns == unscaled.select(narrow, question).columns


def test_a_large_index_is_written_behind_and_wait_finds_it_on_disk(school, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An index over ``WRITE_BEHIND_ROWS`` rows is saved by a background thread (re-indexing a wide schema is
    done when its vectors are); ``wait`` returns once the file is there, and a new store reads it back."""
    import kgsql.retrieve.index as index_module

    monkeypatch.setattr(index_module, "WRITE_BEHIND_ROWS", 0)
    store = IndexStore(CountingEncoder(), tmp_path)
    built = store.get("school", schema_documents(school))
    store.wait()
    assert len(list(tmp_path.glob("school-*.npz"))) == 1
    again = IndexStore(CountingEncoder(), tmp_path)
    assert np.array_equal(again.get("school", schema_documents(school)).emb, built.emb) and again.encoded == 0


def test_first_stage_seam_prunes_to_its_candidates(school) -> None:  # type: ignore[no-untyped-def]
    """A first stage other than the mean-token one (a graph's vector index) decides which documents the exact
    MaxSim scores; when it cannot tell (None) the mean-token stage answers as if there were none."""
    enc = HashEncoder()
    index = IndexStore(enc, use_disk=False).get("school", schema_documents(school))
    q = enc.encode_tokens(["students home city"], is_query=True)[0].vectors
    fast = maxsim_all(q, index)
    asked: list[int] = []

    def nearest(vectors: np.ndarray, k: int) -> np.ndarray:
        asked.append(k)
        return np.array([5, 2])

    pruned = late_interaction(q, index, exact_limit=0, candidates=4, always=np.array([0]), nearest=nearest)
    assert asked == [4]
    assert np.flatnonzero(~np.isnan(pruned.per_token[0])).tolist() == [0, 2, 5]
    np.testing.assert_allclose(pruned.per_token[:, [0, 2, 5]], fast[:, [0, 2, 5]], rtol=1e-6)
    default = late_interaction(q, index, exact_limit=0, candidates=4)
    silent = late_interaction(q, index, exact_limit=0, candidates=4, nearest=lambda v, k: None)
    np.testing.assert_array_equal(silent.per_token, default.per_token)
    # under the pruning limit nothing is asked: every document is scored exactly
    late_interaction(q, index, nearest=nearest)
    assert asked == [4]


def test_retriever_asks_its_first_stage_with_the_database(school) -> None:  # type: ignore[no-untyped-def]
    from kgsql.retrieve import SchemaRetriever
    from kgsql.retrieve.late_interaction import mean_token_candidates

    calls: list[tuple[str, int]] = []

    class SameAsMemory:
        def candidates(self, database, index, q, k):  # type: ignore[no-untyped-def]
            calls.append((database, k))
            return mean_token_candidates(q, index, k)

    question = "Which students live in the city of the building with most floors?"
    own = SchemaRetriever(HashEncoder(), use_cache=False, exact_limit=0, candidates=6)
    staged = SchemaRetriever(HashEncoder(), use_cache=False, exact_limit=0, candidates=6, first_stage=SameAsMemory())
    assert staged.select(school, question).to_dict() == own.select(school, question).to_dict()
    assert calls == [("school", 6)]
