// Remove tables (and their columns) of a database that are no longer in it.
MATCH (d:Database {name: $database})-[:HAS_TABLE]->(t:Table)
WHERE NOT t.key IN $keep
OPTIONAL MATCH (t)-[:HAS_COLUMN]->(c:Column)
DETACH DELETE c, t;
