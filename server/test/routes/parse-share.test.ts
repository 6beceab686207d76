/**
 * Parses take the analysis workers like views do, so they are shared the same way: the files one
 * address uploads are parsed one worker at a time (however many it sends at once), while two addresses'
 * uploads spread over both workers; and an address past its share is refused with 429 naming the setting.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, multipart, testApp } from '../helpers/app.ts';
import { manyPathsFolded } from '../helpers/heavy-profile.ts';

const dir = mkdtempSync(join(tmpdir(), 'stagediff-parse-share-'));
let app: StagediffApp;
let seed = 1;

/** Folded stacks that take a worker a few seconds to parse (distinct bytes each: no duplicate refusal). */
function slowFile(): string {
  const p = join(dir, `slow-${seed}.folded`);
  writeFileSync(p, manyPathsFolded(30_000, 20, seed++));
  return p;
}

function uploadFrom(address: string, id: string, stage: string, auth: Record<string, string>, path: string) {
  const m = multipart([path]);
  return app.inject({
    method: 'POST',
    url: `/api/comparisons/${id}/stages/${stage}/artifacts`,
    headers: { ...auth, ...m.headers },
    payload: m.payload,
    remoteAddress: address,
  });
}

/** Runs the uploads at once and returns their statuses and the most workers seen busy meanwhile. */
async function busiest(uploads: Promise<{ statusCode: number; body: string }>[]) {
  let most = 0;
  const sampler = setInterval(() => {
    most = Math.max(most, app.ctx.pool.running);
  }, 10);
  try {
    const done = await Promise.all(uploads);
    return { statuses: done.map((r) => r.statusCode), bodies: done.map((r) => r.body), most };
  } finally {
    clearInterval(sampler);
  }
}

beforeAll(async () => {
  app = await testApp({ ANALYSIS_WORKERS: '2', ANALYSIS_CLIENT_JOBS: '3' });
});
afterAll(async () => {
  await app.close();
});

describe('parses and the fair share', () => {
  it("runs one address's parses on one worker at a time, and two addresses' on both", async () => {
    const c = await createComparison(app, 'parses');
    const stage = await addStage(app, c.id, c.auth, 'one');
    // Both workers started first (a worker starts on its first job): two addresses' small files at once.
    const warm = (n: number) => {
      const p = join(dir, `warm-${n}.folded`);
      writeFileSync(p, `main;f${n} 1\n`);
      return p;
    };
    const started = await Promise.all([
      uploadFrom('10.0.0.8', c.id, stage, c.auth, warm(1)),
      uploadFrom('10.0.0.9', c.id, stage, c.auth, warm(2)),
    ]);
    expect(started.map((r) => r.statusCode)).toEqual([200, 200]);
    const one = await busiest([
      uploadFrom('10.0.0.1', c.id, stage, c.auth, slowFile()),
      uploadFrom('10.0.0.1', c.id, stage, c.auth, slowFile()),
    ]);
    expect(one.statuses, one.bodies.join('\n')).toEqual([200, 200]);
    expect(one.most).toBe(1);
    const two = await busiest([
      uploadFrom('10.0.0.1', c.id, stage, c.auth, slowFile()),
      uploadFrom('10.0.0.2', c.id, stage, c.auth, slowFile()),
    ]);
    expect(two.statuses, two.bodies.join('\n')).toEqual([200, 200]);
    expect(two.most).toBe(2);
  });

  it('refuses an address past ANALYSIS_CLIENT_JOBS with 429 and Retry-After naming it, serving another address meanwhile', async () => {
    const c = await createComparison(app, 'share');
    const stage = await addStage(app, c.id, c.auth, 'one');
    const files = [slowFile(), slowFile(), slowFile(), slowFile()];
    const m = multipart(files.slice(0, 3));
    const first = app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages/${stage}/artifacts`,
      headers: { ...c.auth, ...m.headers },
      payload: m.payload,
      remoteAddress: '10.0.0.3',
    });
    // The three files of one request are parsed one after another: one job of the address at a time.
    // Two more requests take the rest of its share, and the next is refused.
    const more = [files[3]!, slowFile()].map((f) => uploadFrom('10.0.0.3', c.id, stage, c.auth, f));
    for (let t = 0; app.ctx.fairShare.inFlight < 3; t++) {
      if (t > 3000) throw new Error('the three jobs were never admitted');
      await new Promise((r) => setTimeout(r, 10));
    }
    const refused = await uploadFrom('10.0.0.3', c.id, stage, c.auth, slowFile());
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.json().error.message).toMatch(/ANALYSIS_CLIENT_JOBS/);
    // Another address is not refused meanwhile.
    expect((await uploadFrom('10.0.0.4', c.id, stage, c.auth, slowFile())).statusCode).toBe(200);
    expect((await first).statusCode).toBe(200);
    for (const r of await Promise.all(more)) expect(r.statusCode, r.body).toBe(200);
  });
});
