import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_ROUTES, SCHEMAS } from '../../src/api/endpoints.ts';
import type { StagediffApp } from '../../src/app.ts';
import { VIEW_NAMES, runOp } from '../../src/services/analysis-ops.ts';
import { testApp } from '../helpers/app.ts';

/* The routes the server registers are the contract's, and the analysis views are one table. */
let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

describe('the routes and the contract', () => {
  it('tells a path no route serves from one that is routed', async () => {
    const r = await app.inject({ url: '/api/comparisons/nosuch/no-such-view' });
    expect(r.statusCode).toBe(404);
    expect(r.json().error.message).toMatch(/^no route /);
  });

  it('registers every endpoint of the contract, at its method and path, and no other under its name', async () => {
    const doc = (await app.inject({ url: '/api/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const registered: Record<string, { method: string; path: string }> = {};
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) {
        if (!op.operationId) continue;
        expect(registered[op.operationId], `${op.operationId} registered twice`).toBeUndefined();
        registered[op.operationId] = { method: method.toUpperCase(), path: path.replace(/\{(\w+)\}/g, ':$1') };
      }
    expect(registered).toEqual(ENDPOINT_ROUTES);
    // Each answers at its path (a 404 from the router would say the route is missing, whatever the document says).
    for (const [name, { method, path }] of Object.entries(ENDPOINT_ROUTES)) {
      const url = path.replace(/:(\w+)/g, 'nosuch');
      const r = await app.inject({ method, url });
      const unrouted = r.statusCode === 404 && /^no route /.test(r.json().error?.message ?? '');
      expect(`${name}: ${unrouted ? 'no route' : 'routed'}`).toBe(`${name}: routed`);
    }
  });

  it('serves each analysis view of the table as a GET of the contract, and refuses a name outside it', async () => {
    expect(VIEW_NAMES.length).toBeGreaterThan(15);
    for (const name of VIEW_NAMES) {
      expect(ENDPOINT_ROUTES[name].method).toBe('GET');
      expect(SCHEMAS[name].response).toBeDefined();
    }
    // The views the page and the CLI read are among them.
    expect(VIEW_NAMES).toEqual(expect.arrayContaining(['flamegraph', 'diff', 'changes', 'runtime', 'stageTable']));
    await expect(runOp({} as never, {} as never, { op: 'toString' } as never)).rejects.toThrow(
      'unknown analysis operation',
    );
    await expect(runOp({} as never, {} as never, { op: 'createComparison' } as never)).rejects.toThrow(
      'unknown analysis operation',
    );
  });
});
