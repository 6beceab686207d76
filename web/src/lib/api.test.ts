import { describe, expect, it } from 'vitest';
import { retryWait } from './api.ts';

describe('retryWait: a write refused for its rate goes again after the server’s Retry-After', () => {
  it('waits what a 429 says, for the first tries only', () => {
    expect(retryWait(429, '60', 1)).toBe(60);
    expect(retryWait(429, '0', 3)).toBe(0);
    expect(retryWait(429, '5', 4)).toBeNull();
  });
  it('never for another status, a wait it cannot read, or one past a minute', () => {
    expect(retryWait(503, '5', 1)).toBeNull();
    expect(retryWait(413, null, 1)).toBeNull();
    expect(retryWait(429, null, 1)).toBeNull();
    expect(retryWait(429, 'Wed, 21 Oct 2026 07:28:00 GMT', 1)).toBeNull();
    expect(retryWait(429, '3600', 1)).toBeNull();
  });
});
