// Remove a database and everything it holds.
MATCH (d:Database {name: $name})
OPTIONAL MATCH (d)-[:HAS_TABLE]->(t:Table)
OPTIONAL MATCH (t)-[:HAS_COLUMN]->(c:Column)
DETACH DELETE c, t, d;
