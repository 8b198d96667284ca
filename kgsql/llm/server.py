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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ServerTuning:
    """llama.cpp settings that change speed, not answers: batch sizes, flash attention, KV-cache type.

    Defaults are the fastest measured on this project's 2-core AVX-512 machine
    (``python -m kgsql.lab.llm_bench --sweep``, docs/llm.md); ``KGSQL_LLAMA_BATCH``,
    ``KGSQL_LLAMA_UBATCH``, ``KGSQL_LLAMA_FLASH_ATTN`` (on|off|auto) and
    ``KGSQL_LLAMA_KV_TYPE`` (f16|q8_0) override them for another machine."""

    batch: int = 2048
    ubatch: int = 512
    flash_attn: str = "auto"
    kv_type: str = "f16"

    @classmethod
    def from_env(cls) -> "ServerTuning":
        env = os.environ
        base = cls()
        try:
            return cls(batch=int(env.get("KGSQL_LLAMA_BATCH", base.batch)),
                       ubatch=int(env.get("KGSQL_LLAMA_UBATCH", base.ubatch)),
                       flash_attn=env.get("KGSQL_LLAMA_FLASH_ATTN", base.flash_attn).lower(),
                       kv_type=env.get("KGSQL_LLAMA_KV_TYPE", base.kv_type).lower()).checked()
        except ValueError as exc:
            raise LocalServerError(f"bad llama.cpp setting in the environment: {exc}") from None

    def checked(self) -> "ServerTuning":
        if self.batch < 1 or self.ubatch < 1:
            raise ValueError(f"batch sizes must be positive (batch {self.batch}, ubatch {self.ubatch})")
        if self.flash_attn not in FLASH_ATTN:
            raise ValueError(f"flash attention '{self.flash_attn}': expected one of {', '.join(FLASH_ATTN)}")
        if self.kv_type not in KV_TYPES:
            raise ValueError(f"KV-cache type '{self.kv_type}': expected one of {', '.join(KV_TYPES)}")
        if self.kv_type != "f16" and self.flash_attn == "off":
            raise ValueError(f"a {self.kv_type} KV cache needs flash attention (llama.cpp refuses the context)")
        return self

    def apply(self, params: Any) -> None:
        """Set these values on an ``xllamacpp.CommonParams``."""
        import xllamacpp

        params.n_batch = self.batch
        params.n_ubatch = min(self.ubatch, self.batch)
        params.flash_attn_type = getattr(xllamacpp.llama_flash_attn_type, FLASH_ATTN[self.flash_attn])
        kv = getattr(xllamacpp.ggml_type, KV_TYPES[self.kv_type])
        params.cache_type_k = kv
        params.cache_type_v = kv

    def describe(self) -> str:
        return f"batch {self.batch}, ubatch {self.ubatch}, flash-attn {self.flash_attn}, kv {self.kv_type}"


#: Names of xllamacpp's enum members, by the value users write.
FLASH_ATTN = {"auto": "LLAMA_FLASH_ATTN_TYPE_AUTO", "on": "LLAMA_FLASH_ATTN_TYPE_ENABLED",
              "off": "LLAMA_FLASH_ATTN_TYPE_DISABLED"}
KV_TYPES = {"f16": "GGML_TYPE_F16", "q8_0": "GGML_TYPE_Q8_0"}


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
        tuning: "ServerTuning | None" = None,
        cache_prompt: bool = True,
        verbosity: int = LOG_ERRORS_ONLY,
        startup_timeout_s: float = 120.0,
    ) -> None:
        self.model, self.model_path = resolve_model(model)
        self.port = port
        self.n_ctx = n_ctx
        self.threads = threads or default_threads()
        self.parallel = parallel
        try:
            self.tuning = (tuning or ServerTuning.from_env()).checked()
        except ValueError as exc:
            raise LocalServerError(f"bad llama.cpp settings: {exc}") from None
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
        self.tuning.apply(p)
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
