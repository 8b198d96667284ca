// A database's column-level foreign keys.
MATCH (:Database {name: $database})-[:HAS_TABLE]->(t:Table)-[:HAS_COLUMN]->(c:Column)-[:FOREIGN_KEY]->(r:Column)<-[:HAS_COLUMN]-(rt:Table)
RETURN t.name AS table, c.name AS column, rt.name AS ref_table, r.name AS ref_column
ORDER BY table, column, ref_table, ref_column;
