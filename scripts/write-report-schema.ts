// Writes docs/report-schema.json, the published JSON Schema of `stagediff report --format json`, from
// server/src/cli/report-schema.ts (server/test/cli/report.test.ts checks the two are the same).
//   node --import tsx scripts/write-report-schema.ts
import { writeFileSync } from 'node:fs';
import { reportSchema } from '../server/src/cli/report-schema.ts';

writeFileSync(new URL('../docs/report-schema.json', import.meta.url), `${JSON.stringify(reportSchema, null, 2)}\n`);
