"""Build the method an evaluation run asks with, by name.

The runner only needs "something with ``ask(question, db, evidence)``". Named
methods come from the registry ``kgsql.methods``; when it does not import,
every run fails at once with one line that says why (there is no fallback
method: a run must measure the method it names). ``--set key=value``
overrides a field of the method's options (``kgsql.stages``), so an ablation
is a flag, not a code change.
"""
from __future__ import annotations

import math
from dataclasses import MISSING, fields
from typing import Any, Protocol, Sequence

from kgsql.errors import InputError, KgsqlError, UnknownNameError

_TRUE = {"1", "true", "yes", "on", "y", "t"}
_FALSE = {"0", "false", "no", "off", "n", "f"}


class Asker(Protocol):
    """What the runner needs from a method."""

    def ask(self, question: str, db: str, evidence: str | None = None) -> Any: ...


def registry() -> Any:
    """The ``kgsql.methods`` module; a ``KgsqlError`` (one line: what failed) when it does not import."""
    try:
        import kgsql.methods as methods
    except Exception as exc:  # noqa: BLE001 - any failure: said in one line, never a silent other method
        raise KgsqlError(f"the method registry kgsql.methods does not import "
                         f"({type(exc).__name__}: {exc}); no method can run") from exc
    return methods


def available_methods() -> list[str]:
    return list(registry().available_methods())


def _option_fields() -> dict[str, Any]:
    """Defaults of every option name some method knows (the method itself refuses the others when built)."""
    reg = registry()
    kinds = {type(reg.get_method(name).options): None for name in reg.available_methods()}
    defaults: dict[str, Any] = {}
    for f in [f for kind in kinds for f in fields(kind)]:
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
    """``["tips=false", "max_rounds=3"]`` -> typed method option overrides.

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


def make_method(name: str, graph: Any, lm: Any, shots: int | None = None, pool: Any = None,
                overrides: dict[str, Any] | None = None, *, encoder: Any = None) -> Asker:
    """The method ``name`` over ``graph`` with ``lm``; ``shots`` None keeps the method's default.

    ``pool`` is the few-shot example pool (training side only in a cross-fold run)."""
    overrides = dict(overrides or {})
    if shots is not None:
        overrides["shots"] = shots
    kwargs: dict[str, Any] = {"pool": pool}
    if encoder is not None:
        kwargs["encoder"] = encoder
    return registry().build(name, graph, lm, **kwargs, **overrides)


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
    return _count_option(name, "lead_shots")


def default_shots(name: str) -> int:
    """Examples method ``name`` uses by default (0 when the method has no such notion)."""
    return _count_option(name, "shots")
