// Each schema document's mean-token vector on a node of its own, so a re-ingest that replaces the Table and
// Column nodes' properties leaves it alone (the key on the Database node says whether it is current).
UNWIND $rows AS row
MERGE (v:SchemaDocument {key: row.key})
SET v.database = $database, v.kgsql_vector = row.vector;
