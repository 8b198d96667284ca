// Which retrieval index a database's document vectors were written from (cleared when it is re-ingested).
MATCH (d:Database {name: $database})
RETURN d.vector_index_key AS key;
