// Parse Cypher with Neo4j's own parser (@neo4j-cypher/language-support, pinned
// in package.json). Input: a JSON object {name: cypherText} on stdin.
// Output: a JSON list of {name, line, message} for every syntax error; exit 1 if any.
const { lintCypherQuery } = require('@neo4j-cypher/language-support');

const sources = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const problems = [];
for (const [name, text] of Object.entries(sources)) {
  const diagnostics = lintCypherQuery(text, {});
  for (const d of diagnostics) {
    // severity 1 = error; warnings (e.g. unknown labels without a schema) are not failures
    // Parameters are bound at run time by the driver, so "not defined" is not an error here.
    if (d.severity === 1 && !/^Parameter \$\S+ is not defined/.test(d.message)) {
      problems.push({ name, line: d.range.start.line + 1, message: d.message });
    }
  }
}
process.stdout.write(JSON.stringify(problems));
process.exit(problems.length ? 1 : 0);
