// Writes docs/report-schema.json, the published JSON Schema of `stagediff report --format json`, from
// the API contract (server/src/api/report.ts; server/test/cli/report.test.ts checks the two are the same).
//   node --import tsx scripts/write-report-schema.ts
import { writeFileSync } from 'node:fs';
import { Report } from '../server/src/api/report.ts';

writeFileSync(new URL('../docs/report-schema.json', import.meta.url), `${JSON.stringify(Report, null, 2)}\n`);
