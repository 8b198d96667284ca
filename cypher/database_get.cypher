// One database node with its properties, or nothing.
MATCH (d:Database {name: $name})
RETURN properties(d) AS props;
