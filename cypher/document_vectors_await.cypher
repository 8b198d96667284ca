// Wait until the schema documents' vector index is online (it is built in the background after creation).
CALL db.awaitIndex('kgsql_schema_documents', $timeout_s);
