/**
 * A stage's execution traces read as profiles: each trace yields the four profiles `go tool trace
 * -pprof=net|sync|syscall|sched` derives, offered as kinds of their own beside the uploaded profiles,
 * read by every profile view and diff, and divided per request by the stage's run. Figures are checked
 * against Go's own answers in fixtures/traces/expected.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';
import { reportTotal } from '../helpers/trace-compare.ts';

const trace = (name: string) => `${fixturesDir}traces/${name}.trace`;
const expected = (name: string) => readFileSync(`${fixturesDir}traces/expected/${name}`, 'utf8');
const wrk = (stage: string) => `${fixturesDir}demo/${stage}/run-1/wrk.txt`;
const wrkRps = (stage: string) => Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(wrk(stage), 'utf8'))![1]);

describe('execution traces as profiles of a stage', () => {
  let app: StagediffApp;
  let id: string;
  const get = async (path: string) => {
    const r = await app.inject({ url: `/api/comparisons/${id}/${path}` });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };

  beforeAll(async () => {
    app = await testApp();
    const c = await createComparison(app, 'traces');
    id = c.id;
    for (const [stage, file] of [
      ['baseline', 'demo-go1.26-baseline'],
      ['pooled', 'demo-go1.26-pooled'],
    ] as const) {
      const sid = await addStage(app, id, c.auth, stage);
      const r = await upload(app, id, sid, c.auth, [trace(file), wrk(stage)]);
      expect(r.statusCode, r.body).toBe(200);
    }
  });
  afterAll(async () => app.close());

  it('the comparison lists each trace with the summaries of the four profiles it yields', async () => {
    const body = (await app.inject({ url: `/api/comparisons/${id}` })).json();
    const t = body.stages[1].artifacts.find((a: { kind: string }) => a.kind === 'trace');
    expect(Object.keys(t.summary.profiles)).toEqual(['net', 'sync', 'syscall', 'sched']);
    const sched = t.summary.profiles.sched;
    expect([sched.kind, sched.defaultSampleType]).toEqual(['trace-sched', 'delay']);
    expect(sched.totals.delay).toBe(reportTotal(expected('demo-go1.26-pooled.sched.delay.txt')));
    expect(sched.durationNanos).toBe(t.summary.spanNanos);
    expect(sched.sampleTypes.find((x: { type: string }) => x.type === 'delay').description).toMatch(
      /runnable but waiting to be scheduled during the trace/,
    );
  });

  it('top of a trace kind is go tool trace -pprof read by go tool pprof -top, every function', async () => {
    for (const k of ['net', 'sync', 'syscall', 'sched']) {
      const top = await get(`top?stage=pooled&kind=trace-${k}`);
      const text = expected(`demo-go1.26-pooled.${k}.delay.txt`);
      expect([k, top.kind, top.sampleType, top.total]).toEqual([k, `trace-${k}`, 'delay', reportTotal(text)]);
      const ours = new Map<string, [number, number]>(
        top.rows
          .filter((r: { flat: number; cum: number }) => r.flat || r.cum)
          .map((r: { name: string; flat: number; cum: number }) => [r.name, [r.flat, r.cum]]),
      );
      expect(ours).toEqual(parseTopAll(text));
    }
  });

  it('the flamegraph offers the kind, and a stage without traces is named when asked for one', async () => {
    const f = await get('flamegraph?stage=baseline&kind=trace-sched&mode=absolute');
    expect(f.total).toBe(reportTotal(expected('demo-go1.26-baseline.sched.delay.txt')));
    const c = await createComparison(app, 'none');
    const sid = await addStage(app, c.id, c.auth, 'only-wrk');
    await upload(app, c.id, sid, c.auth, [wrk('baseline')]);
    const r = await app.inject({ url: `/api/comparisons/${c.id}/top?stage=only-wrk&kind=trace-sync` });
    expect(r.statusCode).toBe(404);
    expect(r.json().error.message).toContain('stage "only-wrk" has no sync blocking (trace) profile');
  });

  it('a diff of a trace kind is per request when each trace has its run (its rps × the trace’s span)', async () => {
    const d = await get('diff?base=baseline&target=pooled&kind=trace-sync');
    expect([d.kind, d.mode, d.sampleType]).toEqual(['trace-sync', 'per-request', 'delay']);
    const span = async (stage: string) => {
      const body = (await app.inject({ url: `/api/comparisons/${id}` })).json();
      const st = body.stages.find((s: { name: string }) => s.name === stage);
      return st.artifacts.find((a: { kind: string }) => a.kind === 'trace').summary.spanNanos / 1e9;
    };
    const baseRequests = wrkRps('baseline') * (await span('baseline'));
    const targetRequests = wrkRps('pooled') * (await span('pooled'));
    expect(d.perRequest.baseRequests).toBeCloseTo(baseRequests, 6);
    expect(d.perRequest.targetRequests).toBeCloseTo(targetRequests, 6);
    expect(d.perRequest.measured).toBe(true);
    const total = (n: string) => reportTotal(expected(`${n}.sync.delay.txt`));
    expect(d.baseTotal).toBeCloseTo(total('demo-go1.26-baseline') / baseRequests, 3);
    expect(d.targetTotal).toBeCloseTo(total('demo-go1.26-pooled') / targetRequests, 3);
    // absolute: the totals as Go derived them
    const a = await get('diff?base=baseline&target=pooled&kind=trace-sync&mode=absolute');
    expect([a.baseTotal, a.targetTotal]).toEqual([total('demo-go1.26-baseline'), total('demo-go1.26-pooled')]);
  });
});
