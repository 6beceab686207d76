import { describe, expect, it } from 'vitest';
import { editTokenMatches, hashEditToken, newEditToken, newId } from '../../src/store/secrets.ts';

describe('ids and edit tokens', () => {
  it('are URL-safe and never start with a dash (they are passed as CLI option values)', () => {
    for (let i = 0; i < 5000; i++) {
      const id = newId();
      const token = newEditToken();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(token).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
    }
  });

  it('a token matches only its own hash', () => {
    const t = newEditToken();
    expect(editTokenMatches(hashEditToken(t), t)).toBe(true);
    expect(editTokenMatches(hashEditToken(t), newEditToken())).toBe(false);
    expect(editTokenMatches(null, t)).toBe(false);
  });
});
