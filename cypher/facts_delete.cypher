// Remove mined facts by key.
MATCH (f:Fact)
WHERE f.key IN $keys
DETACH DELETE f;
