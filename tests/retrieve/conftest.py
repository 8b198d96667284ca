"""Fixtures for retrieval tests: one MiniLM load per session, a small real SQLite database."""
from __future__ import annotations

from pathlib import Path

import pytest
from retrieve_school import make_school_db, school_schema  # type: ignore[import-not-found]

from kgsql.schema.model import DatabaseSchema


@pytest.fixture(scope="session")
def minilm():  # type: ignore[no-untyped-def]
    """The default encoder, loaded once for the whole session."""
    from kgsql.text.encoder import get_encoder

    return get_encoder("minilm")


@pytest.fixture(scope="session")
def school_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_school_db(tmp_path_factory.mktemp("school") / "school.sqlite")


@pytest.fixture(scope="session")
def retrieval_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("retrieve-cache")


@pytest.fixture(scope="session")
def retriever(minilm, retrieval_cache: Path):  # type: ignore[no-untyped-def]
    from kgsql.retrieve import SchemaRetriever

    return SchemaRetriever(minilm, cache_dir=retrieval_cache)


@pytest.fixture()
def school(school_db: Path) -> DatabaseSchema:
    return school_schema(school_db)
