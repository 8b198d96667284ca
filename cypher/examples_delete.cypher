// Remove stored examples of a database by key.
MATCH (e:Example {database: $database})
WHERE e.key IN $keys
DETACH DELETE e;
