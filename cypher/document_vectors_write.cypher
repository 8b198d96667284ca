// Each schema document's mean-token vector on its Table or Column node, labelled for the vector index.
UNWIND $rows AS row
OPTIONAL MATCH (t:Table {key: row.key})
OPTIONAL MATCH (c:Column {key: row.key})
WITH row, coalesce(c, t) AS n
WHERE n IS NOT NULL
SET n:SchemaDocument, n.kgsql_vector = row.vector;
