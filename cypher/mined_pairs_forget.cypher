// Forget that these pairs of a database were mined (their example was removed; teaching them again re-mines).
MATCH (p:MinedPair {database: $database})
WHERE p.pair IN $pairs
DETACH DELETE p;
