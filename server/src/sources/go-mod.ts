/**
 * What a stage's own go.mod and go.sum say about its dependencies: the module versions the build may
 * use (its `require` lines, and the right side of its `replace` lines that name a version) and the
 * "h1:" hash go.sum records for each module zip. The module proxy is asked only for those (goproxy.ts).
 */

/** module → versions the go.mod requires or replaces to. */
export function requiredModules(goMod: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (module: string, version: string) => {
    const s = out.get(module) ?? new Set<string>();
    s.add(version);
    out.set(module, s);
  };
  let block: 'require' | 'replace' | null = null;
  for (const raw of goMod.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (line === '') continue;
    if (block) {
      if (line === ')') {
        block = null;
        continue;
      }
      directive(block, line, add);
      continue;
    }
    const m = /^(require|replace)\s*(\(?)\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[2] === '(') block = m[1] as 'require' | 'replace';
    else directive(m[1] as 'require' | 'replace', m[3]!, add);
  }
  return out;
}

function unquote(s: string): string {
  return s.startsWith('"') && s.endsWith('"') && s.length >= 2 ? s.slice(1, -1) : s;
}

function directive(kind: 'require' | 'replace', text: string, add: (m: string, v: string) => void): void {
  const words = text.split(/\s+/).map(unquote);
  if (kind === 'require') {
    if (words.length >= 2) add(words[0]!, words[1]!);
    return;
  }
  // replace old [v] => new v (a local directory on the right has no version: nothing to fetch)
  const arrow = words.indexOf('=>');
  if (arrow < 0) return;
  const right = words.slice(arrow + 1);
  if (right.length === 2) add(right[0]!, right[1]!);
}

/** `module@version` → the h1 hash of its zip, from go.sum's lines (the `/go.mod` lines are left aside). */
export function goSumHashes(goSum: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of goSum.split('\n')) {
    const w = line.trim().split(/\s+/);
    if (w.length !== 3 || w[1]!.endsWith('/go.mod') || !w[2]!.startsWith('h1:')) continue;
    out.set(`${w[0]}@${w[1]}`, w[2]!);
  }
  return out;
}
