// Remove every mined fact and mined-pair mark of a database (when the database is dropped).
MATCH (n)
WHERE (n:Fact OR n:MinedPair) AND n.database = $name
DETACH DELETE n;
