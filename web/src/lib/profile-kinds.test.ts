/// <reference types="node" />
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Stage } from './api.ts';
import { KIND_LABELS, hasProfile, heldKinds, isProfileKind, resolveKind, sampleTypesOf } from './profile-kinds.ts';

/** The stages of the demo comparison as GET /api/comparisons/demo lists them (their files' summaries). */
const demo = JSON.parse(readFileSync(new URL('./testdata/demo.stages.json', import.meta.url), 'utf8')) as Stage[];

describe('profile kinds', () => {
  it('lists the kinds the stages hold, CPU first, with the picker labels', () => {
    expect(heldKinds(demo)).toEqual(['cpu', 'allocs', 'mutex', 'block', 'heap', 'goroutine']);
    expect(heldKinds(demo).map((k) => KIND_LABELS[k])).toEqual([
      'CPU',
      'allocations (window)',
      'mutex',
      'block',
      'heap (snapshot)',
      'goroutines',
    ]);
    expect(heldKinds([])).toEqual([]);
    expect(isProfileKind('allocs')).toBe(true);
    expect(isProfileKind('toString')).toBe(false);
  });
  it('offers the sample types of a kind, and says which accumulate since the process started', () => {
    const since = (k: 'allocs' | 'heap') =>
      sampleTypesOf(demo, k).map((t) => `${t.type}${t.cumulativeSinceStart ? ' (since start)' : ''}`);
    // An allocs delta covers its window; a heap snapshot's alloc_* count since the process started.
    expect(since('allocs')).toEqual(['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space']);
    expect(since('heap')).toEqual([
      'alloc_objects (since start)',
      'alloc_space (since start)',
      'inuse_objects',
      'inuse_space',
    ]);
    expect(sampleTypesOf(demo, 'cpu').map((t) => t.type)).toEqual(['samples', 'cpu']);
  });
  it('resolves the kind of a view as the server does', () => {
    expect(resolveKind(demo, { kind: '', sampleType: '' })).toBe('cpu');
    expect(resolveKind(demo, { kind: 'heap', sampleType: '' })).toBe('heap');
    // A sample type alone: the kind whose own default it is (allocations for alloc_space, the heap
    // snapshot for inuse_space), else the first kind that holds it.
    expect(resolveKind(demo, { kind: '', sampleType: 'alloc_space' })).toBe('allocs');
    expect(resolveKind(demo, { kind: '', sampleType: 'inuse_space' })).toBe('heap');
    expect(resolveKind(demo, { kind: '', sampleType: 'contentions' })).toBe('mutex');
    expect(resolveKind([], { kind: '', sampleType: '' })).toBe(null);
    expect(hasProfile(demo[0], 'heap')).toBe(true);
    expect(hasProfile(demo[0], 'wall')).toBe(false);
    expect(hasProfile(undefined)).toBe(false);
  });
});
