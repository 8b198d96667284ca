// Column-level join edges: (child column)-[:FOREIGN_KEY]->(referenced column).
// origin: "declared" (the database's own foreign key) or "discovered" (an inclusion
// dependency found in the data at ingest); coverage: the discovered share of values.
UNWIND $foreign_keys AS row
MATCH (a:Column {key: row.from_key}), (b:Column {key: row.to_key})
MERGE (a)-[f:FOREIGN_KEY]->(b)
SET f.origin = row.origin, f.coverage = row.coverage;
