"""A retriever built on first use, shared by whoever holds the factory.

Loading the encoder takes seconds; a method, an agent's tools or a service
that may never search should not pay it up front, and everything that does
search should share one retriever (its indexes stay warm).
"""
from __future__ import annotations

import threading
from typing import Any, Callable


def lazy_retriever(retriever: Any = None, encoder: Any = None, first_stage: Any = None) -> Callable[[], Any]:
    """A function returning ``retriever``, or a ``SchemaRetriever(encoder, first_stage=...)`` made on its first
    call. ``first_stage``: a graph server's vector index (``SchemaGraph.vector_stage``), or a function returning
    one or None, called then (a service opens its graph on first use); None: the retriever's own."""
    holder: list[Any] = [retriever]
    lock = threading.Lock()

    def get() -> Any:
        with lock:
            if holder[0] is None:
                from kgsql.retrieve.retriever import SchemaRetriever

                stage = first_stage() if callable(first_stage) else first_stage
                holder[0] = (SchemaRetriever(encoder, first_stage=stage) if encoder is not None
                             else SchemaRetriever(first_stage=stage))
            return holder[0]

    return get
