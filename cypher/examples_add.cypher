// Keep (question, SQL) pairs of a database as its few-shot examples (one node per pair).
UNWIND $examples AS row
MERGE (e:Example {key: row.key})
SET e = row;
