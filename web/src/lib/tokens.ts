/**
 * Edit tokens and the list of comparisons this browser created, kept in localStorage.
 * `stagediff.tokens` maps comparison id → edit token; `stagediff.recent` lists {id, title, createdAt}.
 */

const TOKENS_KEY = 'stagediff.tokens';
const RECENT_KEY = 'stagediff.recent';

export interface RecentComparison {
  id: string;
  title: string;
  createdAt: string;
}

function read<T>(key: string, fallback: T): T {
  try {
    const raw = globalThis.localStorage?.getItem(key);
    return raw ? (JSON.parse(raw) as T) : fallback;
  } catch {
    return fallback;
  }
}

function write(key: string, value: unknown): void {
  try {
    globalThis.localStorage?.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or disabled: the token stays in memory for this page only */
  }
}

export function getTokens(): Record<string, string> {
  const t = read<unknown>(TOKENS_KEY, {});
  return t && typeof t === 'object' ? (t as Record<string, string>) : {};
}

export function getToken(id: string): string | null {
  const t = getTokens()[id];
  return typeof t === 'string' ? t : null;
}

export function saveToken(id: string, token: string, title: string): void {
  write(TOKENS_KEY, { ...getTokens(), [id]: token });
  const recent = getRecent().filter((r) => r.id !== id);
  recent.unshift({ id, title, createdAt: new Date().toISOString() });
  write(RECENT_KEY, recent.slice(0, 50));
}

export function renameRecent(id: string, title: string): void {
  write(
    RECENT_KEY,
    getRecent().map((r) => (r.id === id ? { ...r, title } : r)),
  );
}

export function forget(id: string): void {
  const tokens = getTokens();
  delete tokens[id];
  write(TOKENS_KEY, tokens);
  write(
    RECENT_KEY,
    getRecent().filter((r) => r.id !== id),
  );
}

export function getRecent(): RecentComparison[] {
  const r = read<unknown>(RECENT_KEY, []);
  const list = Array.isArray(r) ? (r as RecentComparison[]) : [];
  const tokens = getTokens();
  // Also list comparisons that only have a token (e.g. stored by an older version).
  for (const id of Object.keys(tokens)) if (!list.some((x) => x.id === id)) list.push({ id, title: id, createdAt: '' });
  return list;
}
