// Writes docs/report.schema.json, the JSON Schema of the report document, from its one
// definition (shared/api/reports.ts): `node scripts/run-ts.mjs scripts/report-schema.ts`.
// A test fails when the committed file and the definition disagree.
import { writeFileSync } from 'node:fs';
import { reportJsonSchema } from '../shared/api/report-schema';

writeFileSync('docs/report.schema.json', `${JSON.stringify(reportJsonSchema(), null, 2)}\n`);
console.log('wrote docs/report.schema.json');
