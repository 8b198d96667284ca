// A database's stored (question, SQL) examples, oldest first.
MATCH (e:Example {database: $database})
RETURN e.key AS key, e.question AS question, e.sql AS sql, e.source AS source, e.added AS added
ORDER BY e.added, e.key;
