// Neo4j's vector index over schema documents (SchemaDocument nodes, one per table or column document), the
// retriever's first stage on a wide database (kgsql.graph.vectors). 384: all-MiniLM-L6-v2, the encoder kgsql
// ships; another encoder's vectors are not written (the in-memory first stage serves it).
CREATE VECTOR INDEX kgsql_schema_documents IF NOT EXISTS
FOR (n:SchemaDocument) ON (n.kgsql_vector)
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
