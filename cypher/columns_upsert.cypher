// Create or replace Column nodes and their inclusion edges (HAS_COLUMN) from tables.
UNWIND $columns AS row
MATCH (t:Table {key: row.table_key})
MERGE (c:Column {key: row.key})
SET c = row.props
MERGE (t)-[:HAS_COLUMN]->(c);
