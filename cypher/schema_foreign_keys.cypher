// A database's column-level join edges (declared foreign keys and discovered joins).
MATCH (:Database {name: $database})-[:HAS_TABLE]->(t:Table)-[:HAS_COLUMN]->(c:Column)-[f:FOREIGN_KEY]->(r:Column)<-[:HAS_COLUMN]-(rt:Table)
RETURN t.name AS table, c.name AS column, rt.name AS ref_table, r.name AS ref_column,
       coalesce(f.origin, 'declared') AS origin, f.coverage AS coverage
ORDER BY table, column, ref_table, ref_column;
