// Create or replace the Database node's properties (name is the identity).
MERGE (d:Database {name: $name})
SET d = $props;
