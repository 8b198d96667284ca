// The nearest schema documents of one database to each query vector, through Neo4j's vector index: nothing when
// the graph's vectors of that database are not the ones of retrieval index $key. The index spans every database
// of the graph, so each vector asks for $ks[i] nodes and those of other databases drop out.
MATCH (d:Database {name: $database})
WHERE d.vector_index_key = $key
UNWIND range(0, size($vectors) - 1) AS i
CALL db.index.vector.queryNodes('kgsql_schema_documents', $ks[i], $vectors[i]) YIELD node, score
WITH i, node, score
WHERE node.database = $database
RETURN i AS query, node.key AS key, score
ORDER BY query, score DESC;
