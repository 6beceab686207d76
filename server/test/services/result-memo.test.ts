/**
 * The result memo is bounded by the memory it really holds: values, keys and per-entry overhead, and
 * never a small slice that keeps a larger allocation (Node's Buffer pool) alive behind it.
 */
import { describe, expect, it } from 'vitest';
import { ResultMemo } from '../../src/services/result-memo.ts';
import { createComparison, testApp } from '../helpers/app.ts';

describe('ResultMemo', () => {
  it('counts keys and overhead, evicts least recently used first, refuses a value over a quarter', () => {
    const memo = new ResultMemo(64 * 1024);
    memo.set('a', Buffer.alloc(10_000));
    memo.set('b', Buffer.alloc(10_000));
    expect(memo.bytes).toBeGreaterThan(20_000 + 4);
    expect(memo.get('a')).toBeDefined(); // a is now the most recent
    for (let i = 0; i < 5; i++) memo.set(`c${i}`, Buffer.alloc(10_000));
    expect(memo.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(memo.get('b')).toBeUndefined();
    expect(memo.get('a')).toBeDefined();
    memo.set('huge', Buffer.alloc(17 * 1024));
    expect(memo.get('huge')).toBeUndefined();
    // A key is memory too: many entries of long keys and empty values stay inside the bound.
    const keys = new ResultMemo(64 * 1024);
    for (let i = 0; i < 10_000; i++) keys.set(`${'k'.repeat(500)}${i}`, Buffer.alloc(0));
    expect(keys.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(keys.size).toBeLessThan(64);
    // Replacing an entry counts it once.
    const once = new ResultMemo(1024 * 1024);
    for (let i = 0; i < 10; i++) once.set('same', Buffer.alloc(1000));
    expect(once.size).toBe(1);
    expect(once.bytes).toBeLessThan(2000);
  });

  it('keeps small slices of the shared pool as copies of their own: what it holds stays near the bound', () => {
    const bound = 1024 * 1024;
    const memo = new ResultMemo(bound);
    const hex = 'ab'.repeat(100);
    for (let i = 0; i < 20_000; i++) {
      // What a database driver does: a pooled slice per value, other pooled allocations in between.
      const v = Buffer.from(hex, 'hex');
      expect(v.buffer.byteLength).toBeGreaterThan(v.byteLength);
      Buffer.allocUnsafe(4000).fill(1);
      memo.set(`entry-${i}`, v);
    }
    expect(memo.bytes).toBeLessThanOrEqual(bound);
    // The memory each kept value keeps alive is its backing allocation, not its length. Counted per value
    // (not from process-wide figures, which other test workers share): slices would keep a pool slab each.
    let kept = 0;
    let entries = 0;
    for (let i = 0; i < 20_000; i++) {
      const v = memo.get(`entry-${i}`);
      if (!v) continue;
      entries++;
      expect(v.buffer.byteLength).toBe(v.byteLength);
      kept += v.buffer.byteLength;
    }
    expect(entries).toBeGreaterThan(1000);
    expect(kept).toBeLessThanOrEqual(bound);
  });

  it('shows its size and bound in /healthz and /metrics (RESULT_MEMO_MAX_BYTES)', async () => {
    const app = await testApp({ RESULT_MEMO_MAX_BYTES: String(512 * 1024) });
    try {
      const memo = async () => (await app.inject({ url: '/healthz' })).json().resultMemo;
      expect(await memo()).toEqual({ bytes: 0, maxBytes: 512 * 1024, entries: 0 });
      const { id } = await createComparison(app, 'memo');
      expect(
        (await app.inject({ url: `/api/comparisons/${id}`, headers: { 'accept-encoding': 'br' } })).statusCode,
      ).toBe(200);
      const after = await memo();
      expect(after.entries).toBe(2); // br and gzip of the comparison's JSON
      expect(after.bytes).toBeGreaterThan(2 * 256);
      const metrics = (await app.inject({ url: '/metrics' })).body;
      expect(metrics).toContain(`stagediff_result_memo_bytes ${after.bytes}\n`);
      expect(metrics).toContain(`stagediff_result_memo_max_bytes ${512 * 1024}\n`);
    } finally {
      await app.close();
    }
  });
});
