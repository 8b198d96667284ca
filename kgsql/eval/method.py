"""Build the method an evaluation run asks with, by name.

The runner only needs "something with ``ask(question, db, evidence)``". Named
methods come from the registry ``kgsql.methods`` when it is importable; until
then only ``kgsql`` (the default ``Text2SQL`` pipeline) is available, with
few-shot examples supplied through the pipeline's ``examples`` hook. Either
way ``--set key=value`` overrides ``MethodOptions`` fields, so an ablation is
a flag, not a code change.
"""
from __future__ import annotations

import math
import sys
from dataclasses import MISSING, fields, replace
from typing import Any, Protocol, Sequence

from kgsql.errors import InputError, UnknownNameError

FALLBACK_METHODS = ("kgsql",)
_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f"}
_registry_warned = False


class Asker(Protocol):
    """What the runner needs from a method."""

    def ask(self, question: str, db: str, evidence: str | None = None) -> Any: ...


def registry() -> Any | None:
    """The ``kgsql.methods`` module, or None while it is absent or does not import.

    A registry that fails to import (e.g. mid-way through a change by its
    owner) is reported once on stderr and treated as absent, so runs of the
    plain ``kgsql`` method keep working."""
    global _registry_warned
    try:
        import kgsql.methods as methods
    except ModuleNotFoundError as exc:
        if exc.name != "kgsql.methods":
            raise
        return None
    except Exception as exc:  # noqa: BLE001 - a half-finished registry must not break plain runs
        if not _registry_warned:
            print(f"warning: kgsql.methods does not import ({type(exc).__name__}: {exc}); "
                  f"only {', '.join(FALLBACK_METHODS)} is available", file=sys.stderr)
            _registry_warned = True
        return None
    return methods


def available_methods() -> list[str]:
    reg = registry()
    return list(reg.available_methods()) if reg is not None else list(FALLBACK_METHODS)


def _option_fields() -> dict[str, Any]:
    """Defaults of every option name some method knows (the method itself refuses the others when built)."""
    from kgsql.agent.method import AgentOptions
    from kgsql.generate.options import MethodOptions
    from kgsql.stages.method import OneCallOptions

    defaults: dict[str, Any] = {}
    for f in [*fields(OneCallOptions), *fields(MethodOptions), *fields(AgentOptions)]:
        if f.default is not MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not MISSING:  # type: ignore[misc]
            defaults[f.name] = f.default_factory()  # type: ignore[misc]
        else:
            defaults[f.name] = None
    return defaults


def _convert(key: str, text: str, default: Any) -> Any:
    """``text`` as the type of the option's default (bool, int, float, tuple, str)."""
    raw = text.strip()
    if isinstance(default, bool):
        low = raw.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise InputError(f"--set {key}={text}: expected true or false")
    try:
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            value = float(raw)
            if not math.isfinite(value):
                raise InputError(f"--set {key}={text}: expected a finite number")
            return value
    except ValueError as exc:
        raise InputError(f"--set {key}={text}: expected a {type(default).__name__}") from exc
    if isinstance(default, (tuple, list)):
        return tuple(p.strip() for p in raw.split(",") if p.strip())
    if default is None:
        low = raw.lower()
        if low in ("none", "null", ""):
            return None
        for cast in (int, float):
            try:
                return cast(raw)
            except ValueError:
                pass
    return raw


def parse_sets(items: Sequence[str] | None) -> dict[str, Any]:
    """``["tips=false", "max_rounds=3"]`` -> typed ``MethodOptions`` overrides.

    Unknown option names are refused with the list of known ones, so a typo
    cannot silently run the unablated method."""
    defaults = _option_fields()
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InputError(f"--set {item!r}: expected key=value")
        if key not in defaults:
            raise UnknownNameError(f"--set {key}: unknown method option (known: {', '.join(sorted(defaults))})")
        out[key] = _convert(key, value, defaults[key])
    return out


def _pool_examples(pool: Any, k: int, encoder: Any = None) -> Any:
    """A ``Text2SQL`` ``examples`` hook: the ``k`` masked-similarity nearest pool examples."""
    from kgsql.fewshot.select import ExampleQuery, get_selector

    selector = get_selector("masked-similarity", pool, encoder=encoder)

    def provide(question: str, schema: Any) -> list[tuple[str, str]]:
        picks = selector.select(ExampleQuery(question, schema), k)
        return [(e.question, e.sql) for e in picks]

    return provide


def make_method(name: str, graph: Any, lm: Any, shots: int | None = None, pool: Any = None,
                overrides: dict[str, Any] | None = None, *, encoder: Any = None) -> Asker:
    """The method ``name`` over ``graph`` with ``lm``; ``shots`` None keeps the method's default.

    ``pool`` is the few-shot example pool (training side only in a cross-fold run)."""
    overrides = dict(overrides or {})
    reg = registry()
    if reg is not None:
        if shots is not None:
            overrides["shots"] = shots
        kwargs: dict[str, Any] = {"pool": pool}
        if encoder is not None:
            kwargs["encoder"] = encoder
        return reg.build(name, graph, lm, **kwargs, **overrides)
    if name not in FALLBACK_METHODS:
        raise UnknownNameError(f"method '{name}' needs the method registry (kgsql.methods), which is not "
                               f"available; without it only {', '.join(FALLBACK_METHODS)} runs")
    from kgsql.generate.pipeline import MethodOptions, Text2SQL

    options = replace(MethodOptions(), **overrides)
    examples = _pool_examples(pool, shots, encoder) if pool is not None and shots else None
    return Text2SQL(graph, lm, options=options, examples=examples)


def effective_shots(method: Any, shots: int | None, has_pool: bool) -> int:
    """Shots the built method really uses: none without a pool, else ``shots`` or the method's default."""
    if not has_pool:
        return 0
    if shots is not None:
        return shots
    value = getattr(getattr(method, "options", None), "shots", None)
    return value if isinstance(value, int) else 0


def _count_option(name: str, option: str) -> int:
    """An example count of registered method ``name`` (0 when it has no such option)."""
    value = getattr(registry().get_method(name).options, option, 0)
    return value if isinstance(value, int) else 0


def lead_shots(name: str) -> int:
    """Examples method ``name`` shows every question alike, before the per-question ``shots``."""
    return _count_option(name, "lead_shots") if registry() is not None else 0


def default_shots(name: str) -> int:
    """Examples method ``name`` uses by default (0 when the method or registry has no such notion)."""
    if registry() is None:
        if name not in FALLBACK_METHODS:
            raise UnknownNameError(f"method '{name}' needs the method registry (kgsql.methods), which is not "
                                   f"available; without it only {', '.join(FALLBACK_METHODS)} runs")
        return 0
    return _count_option(name, "shots")
