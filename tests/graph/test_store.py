"""GraphStore against the real embedded Bolt server: connect, constraints, errors."""
from __future__ import annotations

import pytest

from kgsql.errors import GraphUnavailableError
from kgsql.graph.config import GraphConfig, resolve_config
from kgsql.graph.embedded import ensure_server, running_server
from kgsql.graph.store import GraphStore


def test_embedded_server_is_reused(graph_root):
    first = running_server(graph_root)
    again = ensure_server(graph_root)
    assert first is not None and again.reused and again.pid == first.pid


def test_store_connects_over_bolt_and_creates_constraints(graph_root):
    with GraphStore.open(embedded_root=graph_root) as store:
        assert store.uri.startswith("bolt://127.0.0.1:")
        assert "ArcadeDB" in store.capabilities.server
        assert store.capabilities.vector_index is False  # ArcadeDB's Bolt: no vector indexes
        constraints = {row["name"] for row in store.run_text("SHOW CONSTRAINTS")}
        assert {"database_name", "table_key", "column_key"} <= constraints


def test_transaction_rolls_back_on_error(graph_root):
    with GraphStore.open(embedded_root=graph_root) as store:

        def work(tx):
            tx.run("database_upsert", name="rollback_probe", props={"name": "rollback_probe"})
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError):
            store.write(work)
        assert store.run("database_get", name="rollback_probe") == []


def test_unreachable_server_gives_one_clear_error():
    with pytest.raises(GraphUnavailableError, match="cannot reach graph server at bolt://127.0.0.1:1") as err:
        GraphStore.open("bolt://127.0.0.1:1", user="neo4j", password="x")
    assert not str(err.value).endswith(":") and "refused" in str(err.value).lower()  # the reason, not a colon


def test_wrong_credentials_give_a_clear_error(graph_root):
    uri = running_server(graph_root).uri
    with pytest.raises(GraphUnavailableError, match="refused the credentials"):
        GraphStore.open(uri, user="root", password="definitely-wrong")


def test_invalid_uri_is_rejected():
    with pytest.raises(GraphUnavailableError, match="invalid graph URI|cannot reach"):
        GraphStore.open("nonsense://where", user="u", password="p")


def test_config_resolution_prefers_args_then_env(monkeypatch, tmp_path):
    monkeypatch.delenv("KGSQL_GRAPH_URI", raising=False)
    monkeypatch.delenv("NEO4J_URI", raising=False)
    monkeypatch.setenv("KGSQL_CONFIG", str(tmp_path / "none.yaml"))
    assert resolve_config().is_embedded
    monkeypatch.setenv("NEO4J_URI", "bolt://example:7687")
    monkeypatch.setenv("KGSQL_GRAPH_PASSWORD", "s3cret-pass")
    cfg = resolve_config()
    assert cfg.uri == "bolt://example:7687" and cfg.password == "s3cret-pass"
    assert "s3cret-pass" not in repr(cfg)
    assert resolve_config("bolt://arg:1").uri == "bolt://arg:1"
    (tmp_path / "cfg.yaml").write_text("graph:\n  uri: bolt://fromfile:7687\n  user: alice\n")
    monkeypatch.delenv("NEO4J_URI")
    monkeypatch.setenv("KGSQL_CONFIG", str(tmp_path / "cfg.yaml"))
    assert resolve_config() == GraphConfig(uri="bolt://fromfile:7687", user="alice", password="s3cret-pass")


@pytest.mark.parametrize("uri", ["http://127.0.0.1:7474", "https://127.0.0.1:7473", "bolt://", "ftp://127.0.0.1"])
def test_a_uri_that_is_not_bolt_is_one_clear_error(uri, monkeypatch):
    """Issue 35: http:// reached the driver's HTTP transport and failed with ModuleNotFoundError (aiohttp)."""
    with pytest.raises(GraphUnavailableError, match=r"invalid graph URI .*(not a Bolt URI.*bolt\+s://|no host)"):
        GraphStore.open(uri, user="u", password="p")
    monkeypatch.setenv("KGSQL_GRAPH_URI", uri)
    with pytest.raises(GraphUnavailableError, match=r"\(from KGSQL_GRAPH_URI\)$"):
        resolve_config()
