// Remove columns of a database that are no longer in their table.
MATCH (:Database {name: $database})-[:HAS_TABLE]->(:Table)-[:HAS_COLUMN]->(c:Column)
WHERE NOT c.key IN $keep
DETACH DELETE c;
