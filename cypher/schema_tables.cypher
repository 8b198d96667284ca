// A database's tables with their columns, in stored order.
MATCH (:Database {name: $database})-[:HAS_TABLE]->(t:Table)
OPTIONAL MATCH (t)-[:HAS_COLUMN]->(c:Column)
WITH t, c ORDER BY c.position
RETURN properties(t) AS table, collect(properties(c)) AS columns
ORDER BY table.position;
