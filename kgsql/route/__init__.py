"""Routing: which ingested database is a question about, when the user names none.

``kgsql.route.documents`` summarises each database (tables, columns, descriptions, values),
``kgsql.route.index`` caches those documents and their table vectors privately, keyed by the
database's content hash, ``kgsql.route.router`` ranks databases for a question (dense, BM25,
exact names and values, fused), and ``kgsql.route.graph_router`` builds a router over a graph.
See docs/retrieval.md ("Routing").
"""
