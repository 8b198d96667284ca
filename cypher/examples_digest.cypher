// Per database, how many examples it was taught and the latest: what tells routing its question log changed.
MATCH (e:Example)
RETURN e.database AS database, count(e) AS examples, max(e.added) AS latest
ORDER BY database;
