import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh random id: 128 bits, base64url (22 characters, URL-safe). */
export function newId(): string {
  return randomBytes(16).toString('base64url');
}

/** A fresh edit token: 256 bits, base64url. Shown once to its creator, never stored. */
export function newEditToken(): string {
  return randomBytes(32).toString('base64url');
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
