// Mined facts of a database (kgsql.schema.facts.Fact), in key order.
MATCH (f:Fact {database: $database})
RETURN properties(f) AS fact
ORDER BY fact.key;
