"""``default_lm()``: the LM pipeline code gets when the user configured nothing special.

A configured endpoint (``KGSQL_LLM_BASE_URL``) wins; otherwise kgsql starts the
local model once per process and reuses it, so offline users need no API.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any

from kgsql.llm.config import DEFAULT_LOCAL_MODEL, ENV_BASE_URL, ENV_LOCAL_MODEL
from kgsql.llm.openai_lm import OpenAIChatLM
from kgsql.llm.server import LocalModelServer

_lock = threading.Lock()
_servers: dict[str, LocalModelServer] = {}


def default_local_model() -> str:
    """``KGSQL_LOCAL_MODEL``, else the default model; when only another model is pulled (``./run demo``
    pulls the 0.5B), that one, said once on stderr, so ``ask`` after the demo works."""
    chosen = os.environ.get(ENV_LOCAL_MODEL)
    if chosen:
        return chosen
    from kgsql.llm.models import MODELS, get_model

    if get_model(DEFAULT_LOCAL_MODEL).is_pulled():
        return DEFAULT_LOCAL_MODEL
    pulled = [name for name, spec in MODELS.items() if spec.is_pulled()]
    if not pulled:
        return DEFAULT_LOCAL_MODEL  # the server's error names the pull command
    global _said_fallback
    if not _said_fallback:
        print(f"kgsql: using the pulled local model {pulled[0]} ({DEFAULT_LOCAL_MODEL}, the default, is not "
              f"pulled: python -m kgsql.llm pull {DEFAULT_LOCAL_MODEL}; or set {ENV_LOCAL_MODEL})", file=sys.stderr)
        _said_fallback = True
    return pulled[0]


_said_fallback = False


def local_server(model: str | None = None, **server_kwargs: Any) -> LocalModelServer:
    """The process-wide local server for ``model`` (started on first use)."""
    name = model or default_local_model()
    with _lock:
        srv = _servers.get(name)
        if srv is None or not srv.running:
            srv = LocalModelServer(name, **server_kwargs).start()
            _servers[name] = srv
        return srv


def stop_local_servers() -> None:
    """Stop every server ``local_server`` started (also runs at interpreter exit)."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for srv in servers:
        srv.stop()


atexit.register(stop_local_servers)


def default_lm(model: str | None = None, *, n_ctx: int | None = None, **lm_kwargs: Any) -> OpenAIChatLM:
    """An LM from the environment: the configured endpoint, else the local model.

    ``KGSQL_LLM_BASE_URL`` set: ``OpenAIChatLM`` from env (``model``, else ``KGSQL_LLM_MODEL``). Unset: the
    local server for ``model``, else ``KGSQL_LOCAL_MODEL`` (default qwen2.5-coder-1.5b), with ``n_ctx``
    tokens of context when given; if it is not pulled the error names the pull command.
    """
    if os.environ.get(ENV_BASE_URL):
        return OpenAIChatLM(model, **lm_kwargs)
    srv = local_server(model, **({} if n_ctx is None else {"n_ctx": n_ctx}))
    lm_kwargs.setdefault("timeout_s", 600.0)  # CPU generation of long SQL can take minutes
    return OpenAIChatLM(model=srv.model, base_url=srv.base_url, **lm_kwargs)
