// Remove every mined fact, mined-pair mark and stored example of a database (when the database is dropped).
MATCH (n)
WHERE (n:Fact OR n:MinedPair OR n:Example) AND n.database = $name
DETACH DELETE n;
