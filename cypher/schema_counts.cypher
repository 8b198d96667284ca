// Node and edge counts of one database, for verification after ingest
// (declared_foreign_keys: the database's own keys, without the joins discovered in its data).
MATCH (:Database {name: $database})-[:HAS_TABLE]->(t:Table)
OPTIONAL MATCH (t)-[:HAS_COLUMN]->(c:Column)
OPTIONAL MATCH (c)-[f:FOREIGN_KEY]->()
RETURN count(DISTINCT t) AS tables, count(DISTINCT c) AS columns, count(f) AS foreign_keys,
       count(CASE WHEN coalesce(f.origin, 'declared') = 'declared' THEN f END) AS declared_foreign_keys;
