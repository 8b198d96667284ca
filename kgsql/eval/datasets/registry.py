"""The benchmark registry: ``register_benchmark``, ``get_benchmark``, ``available_benchmarks``.

Commands take ``--dataset`` choices, defaults and help texts from here
(``kgsql.eval.datasets`` registers Spider, BIRD, the spatial set and SParC on import).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from kgsql.eval.datasets.base import BENCHMARKS, Benchmark, Dataset  # BENCHMARKS: the store, defined beside Dataset


def register_benchmark(benchmark: Benchmark) -> Benchmark:
    return BENCHMARKS.register(benchmark.name, benchmark)


def available_benchmarks() -> list[str]:
    return BENCHMARKS.names()


def get_benchmark(name: str) -> Benchmark:
    return BENCHMARKS.get(name)


def load_dataset(name: str, data_dir: str | Path, split: str | None = None, **options: Any) -> Dataset:
    """The questions of benchmark ``name`` (``split`` or its default); ``options`` go to its loader."""
    return get_benchmark(name).load(data_dir, split, **options)


def per_benchmark(describe: Callable[[Benchmark], str | None]) -> str:
    """``"spider: X; bird: Y; ..."`` over the registered benchmarks, for help texts (None: left out)."""
    return "; ".join(f"{b.name}: {text}" for b in BENCHMARKS.values() if (text := describe(b)))


def split_help() -> str:
    """Each benchmark's known splits and default, for ``--split`` help texts."""
    return per_benchmark(lambda b: "|".join(b.splits) + (f" (default {b.default_split})" if b.default_split else ""))


def languages() -> list[str]:
    """Every question language some benchmark has (``--questions-lang`` / ``--lang`` choices)."""
    return list(dict.fromkeys(lang for b in BENCHMARKS.values() for lang in b.languages))


def language_help() -> str:
    """``question language (spatial: en|zh)``: the benchmarks with several languages."""
    return f"question language ({per_benchmark(lambda b: '|'.join(b.languages) if len(b.languages) > 1 else None)})"


def taking(option: str) -> str:
    """``"spider/bird"``: the benchmarks whose loader takes ``option``, for help texts."""
    return "/".join(b.name for b in BENCHMARKS.values() if b.loader_options(**{option: True}))


def cross_fold_benchmarks() -> list[str]:
    return [b.name for b in BENCHMARKS.values() if b.cross_fold]
