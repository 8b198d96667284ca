// Table-level inter-table relationship derived from foreign keys; via lists the join conditions.
UNWIND $relations AS row
MATCH (a:Table {key: row.from_key}), (b:Table {key: row.to_key})
MERGE (a)-[r:RELATES_TO]->(b)
SET r.via = row.via;
