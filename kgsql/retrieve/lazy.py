"""A retriever built on first use, shared by whoever holds the factory.

Loading the encoder takes seconds; a method, an agent's tools or a service
that may never search should not pay it up front, and everything that does
search should share one retriever (its indexes stay warm).
"""
from __future__ import annotations

import threading
from typing import Any, Callable


def lazy_retriever(retriever: Any = None, encoder: Any = None) -> Callable[[], Any]:
    """A function returning ``retriever``, or a ``SchemaRetriever(encoder)`` made on its first call."""
    holder: list[Any] = [retriever]
    lock = threading.Lock()

    def get() -> Any:
        with lock:
            if holder[0] is None:
                from kgsql.retrieve.retriever import SchemaRetriever

                holder[0] = SchemaRetriever(encoder) if encoder is not None else SchemaRetriever()
            return holder[0]

    return get
