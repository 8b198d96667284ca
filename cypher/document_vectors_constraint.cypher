// A schema document's vector node is keyed as its Table or Column node is (kgsql.graph.keys).
CREATE CONSTRAINT schema_document_key IF NOT EXISTS FOR (v:SchemaDocument) REQUIRE v.key IS UNIQUE;
