// Node identity: one constraint per label, on its key property.
CREATE CONSTRAINT database_name IF NOT EXISTS FOR (d:Database) REQUIRE d.name IS UNIQUE;
CREATE CONSTRAINT table_key IF NOT EXISTS FOR (t:Table) REQUIRE t.key IS UNIQUE;
CREATE CONSTRAINT column_key IF NOT EXISTS FOR (c:Column) REQUIRE c.key IS UNIQUE;
CREATE CONSTRAINT ingest_lock_database IF NOT EXISTS FOR (l:IngestLock) REQUIRE l.database IS UNIQUE;
CREATE CONSTRAINT fact_key IF NOT EXISTS FOR (f:Fact) REQUIRE f.key IS UNIQUE;
CREATE CONSTRAINT mined_pair_key IF NOT EXISTS FOR (p:MinedPair) REQUIRE p.key IS UNIQUE;
CREATE CONSTRAINT example_key IF NOT EXISTS FOR (e:Example) REQUIRE e.key IS UNIQUE;
