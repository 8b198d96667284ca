"""Typed errors: each says what went wrong and, where it can, what to do next.

CLIs print ``str(error)`` as one line and exit non-zero; library users catch
the specific class.
"""
from __future__ import annotations


class KgsqlError(Exception):
    """Base class of every error kgsql raises on purpose."""

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle as message + attributes, whatever the subclass's ``__init__`` takes
        (errors cross process boundaries: :mod:`kgsql.db.isolate`)."""
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls: type[KgsqlError], args: tuple[object, ...], state: dict[str, object]) -> KgsqlError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class DatabaseFileError(KgsqlError):
    """A database path is missing, not SQLite, corrupt or unreadable."""


class SpatialExtensionError(KgsqlError):
    """A SpatiaLite database was given but mod_spatialite cannot be loaded."""


class UnknownNameError(KgsqlError):
    """A database, table or column name is not known (graph or file)."""


class ProfileError(KgsqlError):
    """An ingestion profile or description file is malformed."""


class GraphError(KgsqlError):
    """The graph store failed."""


class GraphUnavailableError(GraphError):
    """The graph server cannot be reached or refused the credentials."""


class IngestInProgressError(GraphError):
    """Another ingest of the same database is running."""


class UnsafeSQLError(KgsqlError):
    """Generated SQL was rejected before execution (not a single read-only query)."""


class QueryExecutionError(KgsqlError):
    """A query failed while executing (syntax, unknown name, timeout...)."""


class LLMError(KgsqlError):
    """The LLM endpoint failed: down, timed out, rate-limited, or returned garbage."""


class InputError(KgsqlError):
    """A user input (question, option) is empty, too long or otherwise invalid."""


class BusyError(KgsqlError):
    """Every SQL worker is taken by other queries: try again shortly (the service answers 503)."""
