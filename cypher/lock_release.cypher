// Release the ingest lock of a database if this caller still holds it.
MATCH (l:IngestLock {database: $database, token: $token})
DELETE l;
