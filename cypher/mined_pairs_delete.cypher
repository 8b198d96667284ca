// Forget a database's mined pairs of one origin (after its facts are removed).
MATCH (p:MinedPair {database: $database, origin: $origin})
DETACH DELETE p;
