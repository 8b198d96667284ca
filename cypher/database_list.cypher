// Every database in the graph with its counts.
MATCH (d:Database)
RETURN d.name AS name, d.path AS path, d.dialect AS dialect, d.is_spatial AS is_spatial,
       d.table_count AS table_count, d.column_count AS column_count,
       d.foreign_key_count AS foreign_key_count
ORDER BY name;
