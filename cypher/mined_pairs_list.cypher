// The (question, SQL) pairs of a database already mined by one origin (rule or llm).
MATCH (p:MinedPair {database: $database, origin: $origin})
RETURN p.pair AS pair;
