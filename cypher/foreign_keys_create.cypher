// Column-level foreign keys: (child column)-[:FOREIGN_KEY]->(referenced column).
UNWIND $foreign_keys AS row
MATCH (a:Column {key: row.from_key}), (b:Column {key: row.to_key})
MERGE (a)-[:FOREIGN_KEY]->(b);
