// Drop a database's FOREIGN_KEY and RELATES_TO edges before they are rewritten.
MATCH (:Database {name: $database})-[:HAS_TABLE]->(t:Table)
OPTIONAL MATCH (t)-[r:RELATES_TO]-()
DELETE r
WITH DISTINCT t
MATCH (t)-[:HAS_COLUMN]->(c:Column)-[f:FOREIGN_KEY]-()
DELETE f;
