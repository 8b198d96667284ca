// Record which retrieval index a database's document vectors now come from.
MATCH (d:Database {name: $database})
SET d.vector_index_key = $key;
