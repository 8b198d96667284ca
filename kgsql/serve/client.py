"""Find a running ``kgsql serve`` and talk to it (stdlib only: the CLI's warm path imports nothing heavy).

The service writes its address to ``<cache>/service.json`` (0600) while it runs;
``KGSQL_SERVICE_URL`` names one explicitly and ``KGSQL_NO_SERVICE=1`` turns the
lookup off.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kgsql.errors import BusyError, KgsqlError, UnknownNameError
from kgsql.paths import cache_root

ENV_SERVICE_URL = "KGSQL_SERVICE_URL"
ENV_NO_SERVICE = "KGSQL_NO_SERVICE"


def state_file() -> Path:
    return cache_root() / "service.json"


def service_lookup_off() -> bool:
    """``KGSQL_NO_SERVICE=1``: ``ask`` neither uses nor starts a service."""
    return os.environ.get(ENV_NO_SERVICE, "").lower() in {"1", "true", "yes", "on"}


def find_service(timeout_s: float = 0.5) -> str | None:
    """The base URL of a live service, or None (no state file, stale file, lookup turned off)."""
    if service_lookup_off():
        return None
    url = os.environ.get(ENV_SERVICE_URL)
    if not url:
        try:
            url = json.loads(state_file().read_text(encoding="utf-8")).get("url")
        except (OSError, ValueError, AttributeError):
            return None
    if not isinstance(url, str) or not url.startswith("http"):
        return None
    try:
        health = call(url, "GET", "/api/health", timeout_s=timeout_s)
    except KgsqlError:
        return None
    if not (isinstance(health, dict) and health.get("ok")) or not same_settings(health):
        return None
    return url.rstrip("/")


def same_settings(health: dict[str, Any]) -> bool:
    """The service answers with the graph and model this caller would use (else ``ask`` answers here)."""
    from kgsql.secrets import redact_uri

    mine = os.environ.get("KGSQL_GRAPH_URI", "")
    if (redact_uri(mine) if mine else "") != health.get("graph", ""):
        return False
    from kgsql.db.privilege import privileged_allowed

    theirs = health.get("llm") or {}
    return (all(os.environ.get(k, "") == v for k, v in theirs.items())
            and bool(health.get("privileged", False)) == privileged_allowed())


def call(url: str, verb: str, path: str, body: dict[str, Any] | None = None, *, timeout_s: float = 600.0) -> Any:
    """One JSON request; an ``{"error"}`` answer raises it as a kgsql error (404: unknown name, 503: busy)."""
    data = json.dumps(body).encode("utf-8") if body is not None else None
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method=verb,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("error") or str(exc)
        except (ValueError, AttributeError):
            message = str(exc)
        kind = {404: UnknownNameError, 503: BusyError}.get(exc.code, KgsqlError)
        raise kind(message) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise KgsqlError(f"kgsql service at {url} did not answer: {exc}") from None
