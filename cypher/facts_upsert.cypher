// Create or replace mined facts (each row holds all of a fact's properties, key included).
UNWIND $facts AS row
MERGE (f:Fact {key: row.key})
SET f = row;
