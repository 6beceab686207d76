/**
 * Aligns two versions of a file line by line: a shortest edit script (Myers' O(ND) algorithm) between
 * their lines, after the common head and tail are set aside. Unchanged lines pair up even when code
 * above them moved; the rest are removed (old version only) or added (new version only).
 */

export type Aligned =
  | { kind: 'same'; a: number; b: number }
  | { kind: 'removed'; a: number }
  | { kind: 'added'; b: number };

/** Past this many differences the middle is left unpaired (every line of it removed, then added). */
export const MAX_EDIT_DISTANCE = 4000;

/** The lines of a text (0-based indexes into the result are 1-based line numbers − 1). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** The alignment of `a` and `b`, in order; indexes are 0-based. */
export function alignLines(a: readonly string[], b: readonly string[]): Aligned[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: Aligned[] = [];
  for (let i = 0; i < head; i++) out.push({ kind: 'same', a: i, b: i });
  out.push(...middle(a, b, head, a.length - tail, head, b.length - tail));
  for (let k = tail; k > 0; k--) out.push({ kind: 'same', a: a.length - k, b: b.length - k });
  return out;
}

function middle(a: readonly string[], b: readonly string[], a0: number, a1: number, b0: number, b1: number): Aligned[] {
  const n = a1 - a0;
  const m = b1 - b0;
  const unpaired = (): Aligned[] => [
    ...Array.from({ length: n }, (_, i): Aligned => ({ kind: 'removed', a: a0 + i })),
    ...Array.from({ length: m }, (_, j): Aligned => ({ kind: 'added', b: b0 + j })),
  ];
  if (n === 0 || m === 0) return unpaired();
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  // v[k] = furthest x on diagonal k (x − y = k); one copy kept per step d to walk the path back.
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[a0 + x] === b[b0 + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) {
      trace.push(v);
      v = v.slice();
    }
  }
  if (found < 0) return unpaired();
  // Walk back from (n, m) through each step's snapshot (trace[d + 1] is v after step d).
  const rev: Aligned[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d]!; // v after step d − 1
    const k = x - y;
    const down = k === -d || (k !== d && prev[offset + k - 1]! < prev[offset + k + 1]!);
    const pk = down ? k + 1 : k - 1;
    const px = prev[offset + pk]!;
    const py = px - pk;
    while (x > (down ? px : px + 1) && y > (down ? py + 1 : py)) {
      x--;
      y--;
      rev.push({ kind: 'same', a: a0 + x, b: b0 + y });
    }
    if (down) {
      y--;
      rev.push({ kind: 'added', b: b0 + y });
    } else {
      x--;
      rev.push({ kind: 'removed', a: a0 + x });
    }
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    rev.push({ kind: 'same', a: a0 + x, b: b0 + y });
  }
  return rev.reverse();
}
