"""``LocalModelServer``: llama.cpp's OpenAI-compatible server inside this process.

``xllamacpp.Server(CommonParams)`` runs the C++ HTTP server on its own threads;
we bind it to 127.0.0.1 only and talk to it through the same ``openai`` client
as any hosted endpoint, so there is one code path for local and remote models.
Dropping the ``Server`` object stops it (its destructor joins the loop).
"""
from __future__ import annotations

import gc
import os
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kgsql.llm.config import DEFAULT_LOCAL_MODEL
from kgsql.llm.errors import LocalServerError, ModelNotPulledError
from kgsql.llm.models import MODELS, get_model

DEFAULT_CTX = 8192
LOG_ERRORS_ONLY = 1  # llama.cpp verbosity: 1 error, 2 warn, 3 info, 4 debug


def default_threads() -> int:
    """CPUs this process may run on (respects affinity/cgroup pinning where visible)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def resolve_model(model: str) -> tuple[str, Path]:
    """(alias, path) for a registry name or a path to any .gguf file."""
    if model in MODELS:
        spec = get_model(model)
        if not spec.is_pulled():
            raise ModelNotPulledError(
                f"local model {spec.name} is not pulled (expected {spec.path}); "
                f"run: python -m kgsql.llm pull {spec.name}"
            )
        return spec.name, spec.path
    path = Path(model).expanduser()
    if path.suffix == ".gguf" and path.is_file():
        return path.stem, path
    known = ", ".join(sorted(MODELS))
    raise ModelNotPulledError(f"{model!r} is neither a known local model ({known}) nor a .gguf file")


class LocalModelServer:
    """Serve a pulled GGUF model over the OpenAI API on 127.0.0.1.

    ``with LocalModelServer("qwen2.5-coder-0.5b") as srv:
        lm = OpenAIChatLM(base_url=srv.base_url, model=srv.model)``

    ``port=0`` lets the OS pick a free port. Prompt-prefix caching is on by
    default: a repeated schema prefix is not recomputed.
    """

    def __init__(
        self,
        model: str = DEFAULT_LOCAL_MODEL,
        *,
        port: int = 0,
        n_ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        parallel: int = 1,
        cache_prompt: bool = True,
        verbosity: int = LOG_ERRORS_ONLY,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.model, self.model_path = resolve_model(model)
        self.port = port
        self.n_ctx = n_ctx
        self.threads = threads or default_threads()
        self.parallel = parallel
        self.cache_prompt = cache_prompt
        self.verbosity = verbosity
        self.startup_timeout_s = startup_timeout_s
        self._server: Any = None
        self._address: str | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        state = self.base_url if self._address else "stopped"
        return f"LocalModelServer(model={self.model!r}, {state})"

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        """OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        if self._address is None:
            raise LocalServerError("local model server is not running; call start() or use it as a context manager")
        return f"{self._address}/v1"

    def _params(self) -> Any:
        import xllamacpp

        p = xllamacpp.CommonParams()
        p.model.path = str(self.model_path)
        p.model_alias = {self.model}
        p.hostnames = ["127.0.0.1"]
        p.port = self.port
        p.n_ctx = self.n_ctx
        p.n_parallel = self.parallel
        p.cpuparams.n_threads = self.threads
        p.cpuparams_batch.n_threads = self.threads
        p.cache_prompt = self.cache_prompt
        if not self.cache_prompt:
            p.cache_ram_mib = 0  # no host-RAM prompt cache either
        p.verbosity = self.verbosity
        p.ui = False  # no web UI: this is an API for kgsql
        return p

    def start(self) -> "LocalModelServer":
        """Load the model and start listening; returns once it answers /health."""
        with self._lock:
            if self._server is not None:
                return self
            try:
                import xllamacpp
            except ImportError:
                raise LocalServerError(
                    "xllamacpp is not installed; install it with: pip install 'kgsql[local-llm]'"
                ) from None
            try:
                self._server = xllamacpp.Server(self._params())
                self._address = str(self._server.listening_address).rstrip("/")
            except Exception as exc:  # noqa: BLE001 - C++ errors arrive as plain Exception
                self._server = None
                raise LocalServerError(
                    f"llama.cpp server failed to start for {self.model_path.name}: {exc}"
                ) from None
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self._address}/health"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise LocalServerError(f"llama.cpp server at {url} not healthy after {self.startup_timeout_s:g}s")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop serving and free the model (idempotent)."""
        with self._lock:
            server, self._server, self._address = self._server, None, None
        if server is not None:
            del server
            gc.collect()

    def lm(self, **kwargs: Any) -> Any:
        """An ``OpenAIChatLM`` bound to this server."""
        from kgsql.llm.openai_lm import OpenAIChatLM

        return OpenAIChatLM(model=self.model, base_url=self.base_url, **kwargs)

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
