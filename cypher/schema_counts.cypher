// Node and edge counts of one database, for verification after ingest.
MATCH (:Database {name: $database})-[:HAS_TABLE]->(t:Table)
OPTIONAL MATCH (t)-[:HAS_COLUMN]->(c:Column)
OPTIONAL MATCH (c)-[f:FOREIGN_KEY]->()
RETURN count(DISTINCT t) AS tables, count(DISTINCT c) AS columns, count(f) AS foreign_keys;
