// Take the ingest lock of a database (a stale one is taken over), or report who holds it.
MERGE (l:IngestLock {database: $database})
ON CREATE SET l.token = $token, l.acquired_at = $now, l.host = $host, l.pid = $pid
WITH l, l.acquired_at < $stale_before AS stale
SET l.token = CASE WHEN stale THEN $token ELSE l.token END,
    l.host = CASE WHEN stale THEN $host ELSE l.host END,
    l.pid = CASE WHEN stale THEN $pid ELSE l.pid END,
    l.acquired_at = CASE WHEN stale THEN $now ELSE l.acquired_at END
RETURN l.token AS token, l.host AS host, l.pid AS pid;
