// Every database's name and content hash: what the router's cached documents are keyed by.
MATCH (d:Database)
RETURN d.name AS name, d.content_hash AS content_hash
ORDER BY name;
