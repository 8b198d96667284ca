"""Benchmarks: one module per benchmark, registered here; every command reads its choices from the registry.

    from kgsql.eval.datasets import get_benchmark, load_dataset
    ds = load_dataset("spider", "/data/spider")            # Dataset of GoldQuestion, in file order
    get_benchmark("spatial").timeout_s                      # 120.0: eval run's default SQL timeout

A benchmark is a ``Benchmark`` (``base.py``): its name, its loader
(``loader(data_dir, split, **options) -> Dataset``), splits and default
split, default metric and SQL timeout, how its default few-shot pool is found
(a file beside the questions, or the split's other databases), whether
``--protocol cross-fold`` applies, how its databases are named in the schema
graph, its question languages and where lab commands read its schemas.
Registered: ``spider`` (``spider.py``; hardness in ``spider_hardness.py``),
``bird`` (``bird.py``), ``spatial`` (``spatial.py``), ``sparc`` (``sparc.py``:
multi-turn, one example per turn).

Adding one: a module defining ``BENCHMARK = Benchmark(...)`` and its loader,
one line below registering it, and a loader test (see docs/eval.md).
"""
from __future__ import annotations

from kgsql.eval.datasets import bird, sparc, spatial, spider
from kgsql.eval.datasets.base import Benchmark, Dataset, GoldQuestion
from kgsql.eval.datasets.registry import (
    BENCHMARKS, available_benchmarks, get_benchmark, load_dataset, per_benchmark, register_benchmark,
)

__all__ = ["BENCHMARKS", "Benchmark", "Dataset", "GoldQuestion", "available_benchmarks", "get_benchmark",
           "load_dataset", "per_benchmark", "register_benchmark"]

for _module in (spider, bird, spatial, sparc):
    register_benchmark(_module.BENCHMARK)
