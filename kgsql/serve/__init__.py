"""``kgsql serve``: one warm local process (graph, encoder, indexes, model) behind a small HTTP API.

* ``service``  the loaded parts and each operation as a function
* ``http``     the ``/api/`` routes, limits and the OpenAPI description
* ``body``     a request body read as input: one JSON object, bounded depth, valid Unicode
* ``client``   finding a running service (``kgsql ask`` uses it when there is one)
"""
