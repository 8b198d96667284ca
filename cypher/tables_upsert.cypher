// Create or replace Table nodes and their inclusion edges from the database.
UNWIND $tables AS row
MATCH (d:Database {name: $database})
MERGE (t:Table {key: row.key})
SET t = row.props
MERGE (d)-[:HAS_TABLE]->(t);
