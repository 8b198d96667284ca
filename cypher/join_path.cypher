// Shortest FK join path between two tables of one database.
MATCH (a:Table {key: $from_key}), (b:Table {key: $to_key})
MATCH p = shortestPath((a)-[:RELATES_TO*..8]-(b))
RETURN [n IN nodes(p) | n.name] AS tables,
       [r IN relationships(p) | r.via] AS via;
