// Every database's taught questions: the question log routing reads (kgsql.route.history).
MATCH (e:Example)
RETURN e.database AS database, e.question AS question
ORDER BY database, e.key;
