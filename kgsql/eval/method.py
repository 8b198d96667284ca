"""Build the method an evaluation run asks with, by name.

The runner only needs "something with ``ask(question, db, evidence, history)``". Named
methods come from the registry ``kgsql.methods``; when it does not import,
every run fails at once with one line that says why (there is no fallback
method: a run must measure the method it names). ``--set key=value``
overrides a field of the method's options (``kgsql.stages``), so an ablation
is a flag, not a code change.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from kgsql.errors import KgsqlError

class Asker(Protocol):
    """What the runner needs from a method; ``history`` (the earlier questions of a conversation) is
    passed only for a follow-up turn (SParC), so a single-turn-only asker still answers the others.
    An asker whose ``wants_history_sql`` is true also gets ``history_sql``: the SQL the run answered for
    those earlier turns (``--set context=history``)."""

    def ask(self, question: str, db: str, evidence: str | None = None,
            history: Sequence[str] | None = None) -> Any: ...


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


def parse_sets(items: Sequence[str] | None) -> dict[str, Any]:
    """``--set key=value`` items as typed option overrides (``kgsql.methods.parse_sets``), or the registry's one-line error."""
    return registry().parse_sets(items)


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
