// Remove a database's document vectors (before they are written anew, or when the database is dropped).
MATCH (v:SchemaDocument {database: $database})
DETACH DELETE v;
