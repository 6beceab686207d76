import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * base64url of `bytes` random bytes, drawn again while it starts with `-`: ids and tokens are
 * passed as command-line values (`--comparison ID --token T`), where a leading dash reads as an
 * option. Redrawing costs under 1/64 of the entropy of the first character only.
 */
function randomUrlSafe(bytes: number): string {
  for (;;) {
    const s = randomBytes(bytes).toString('base64url');
    if (!s.startsWith('-')) return s;
  }
}

/** A fresh random id: 128 bits, base64url (22 characters, URL-safe, never starting with `-`). */
export function newId(): string {
  return randomUrlSafe(16);
}

/** A fresh edit token: 256 bits, base64url, never starting with `-`. Shown once to its creator, never stored. */
export function newEditToken(): string {
  return randomUrlSafe(32);
}

/**
 * The stored form of an edit token. A plain sha256 is enough here: the token is 256 random bits, so
 * there is nothing to brute-force that a slow password hash would protect.
 */
export function hashEditToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time check of a presented token against a stored hash (null hash: never matches). */
export function editTokenMatches(storedHash: string | null, presented: string): boolean {
  if (storedHash === null || !/^[0-9a-f]{64}$/.test(storedHash)) return false;
  const want = Buffer.from(storedHash, 'hex');
  const got = createHash('sha256').update(presented, 'utf8').digest();
  return timingSafeEqual(want, got);
}

/** Explicit ids (e.g. the seeded `demo`) must be as URL-safe as generated ones. */
export const EXPLICIT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const SHA256_HEX = /^[0-9a-f]{64}$/;
