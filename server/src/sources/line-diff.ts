/**
 * Aligns two versions of a file line by line: a shortest edit script (Myers' O(ND) algorithm) between
 * their lines, after the common head and tail are set aside. Unchanged lines pair up even when code
 * above them moved; the rest are removed (old version only) or added (new version only).
 *
 * The source view asks only about windows of each file (the lines around the sampled ones), so the work
 * is bounded by the windows, not by the files: the common head and tail are found by one pass of
 * comparisons, the changed middle is aligned whole only while it is small (`maxAlignLines` lines of both
 * versions together), else only its windowed lines are aligned, and whatever lies outside the windows is
 * answered as counts of lines left out (`elided`), never as rows.
 */

export type Aligned =
  | { kind: 'same'; a: number; b: number }
  | { kind: 'removed'; a: number }
  | { kind: 'added'; b: number };

/** Lines left out between two shown ones: `a` lines of the old version, `b` of the new. */
export type Elided = { kind: 'elided'; a: number; b: number };

/**
 * Past this many differences a stretch is left unpaired (every line of it removed, then added). The
 * walk back keeps one snapshot of the diagonals per step, about D² integers in all (16 MB at 2,000).
 */
export const MAX_EDIT_DISTANCE = 2000;

/** The lines of a text (0-based indexes into the result are 1-based line numbers − 1). */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1);
  return lines;
}

/** The whole alignment of `a` and `b`, in order; indexes are 0-based. */
export function alignLines(a: readonly string[], b: readonly string[]): Aligned[] {
  const all = (n: number) => new Uint8Array(n).fill(1);
  return alignWindows(a, b, all(a.length), all(b.length), Number.POSITIVE_INFINITY).filter(
    (x): x is Aligned => x.kind !== 'elided',
  );
}

/**
 * The alignment of `a` and `b` restricted to the lines flagged in `showA` (indexes into `a`) and `showB`:
 * a pair is shown when either of its lines is flagged; each stretch of lines between shown pairs (and
 * before the first, after the last) is one `elided` entry. Work: one pass over both files for the common
 * head and tail, and an edit script over at most `maxAlignLines` lines.
 */
export function alignWindows(
  a: readonly string[],
  b: readonly string[],
  showA: Uint8Array,
  showB: Uint8Array,
  maxAlignLines: number,
): (Aligned | Elided)[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: (Aligned | Elided)[] = [];
  let nextA = 0;
  let nextB = 0;
  /** Adds `e`, which stands after `pa` lines of `a` and `pb` of `b`, after an `elided` entry for any skipped. */
  const emit = (e: Aligned, pa: number, pb: number) => {
    if (pa > nextA || pb > nextB) out.push({ kind: 'elided', a: pa - nextA, b: pb - nextB });
    out.push(e);
    nextA = e.kind === 'added' ? pa : pa + 1;
    nextB = e.kind === 'removed' ? pb : pb + 1;
  };
  for (let i = 0; i < head; i++) if (showA[i] || showB[i]) emit({ kind: 'same', a: i, b: i }, i, i);

  // The changed middle: whole while small, else only its shown lines (projected: local index → line).
  const a0 = head;
  const a1 = a.length - tail;
  const b0 = head;
  const b1 = b.length - tail;
  let ia: number[] | null = null;
  let ib: number[] | null = null;
  if (a1 - a0 + (b1 - b0) > maxAlignLines) {
    ia = [];
    ib = [];
    for (let i = a0; i < a1; i++) if (showA[i]) ia.push(i);
    for (let j = b0; j < b1; j++) if (showB[j]) ib.push(j);
  }
  const n = ia ? ia.length : a1 - a0;
  const m = ib ? ib.length : b1 - b0;
  const lineA = (x: number) => (x >= n ? a1 : ia ? ia[x]! : a0 + x);
  const lineB = (y: number) => (y >= m ? b1 : ib ? ib[y]! : b0 + y);
  const script = n + m <= maxAlignLines ? editScript(n, m, (x, y) => a[lineA(x)] === b[lineB(y)]) : null;
  let x = 0;
  let y = 0;
  const step = (kind: Aligned['kind']) => {
    const pa = lineA(x);
    const pb = lineB(y);
    const e: Aligned =
      kind === 'same' ? { kind, a: pa, b: pb } : kind === 'removed' ? { kind, a: pa } : { kind, b: pb };
    const shown = (kind !== 'added' && showA[pa]) || (kind !== 'removed' && showB[pb]);
    if (shown) emit(e, pa, pb);
    if (kind !== 'added') x++;
    if (kind !== 'removed') y++;
  };
  if (script) for (const k of script) step(k);
  else {
    // Too many differences (or lines) to pair: the old lines removed, then the new ones added.
    while (x < n) step('removed');
    while (y < m) step('added');
  }

  for (let t = tail; t > 0; t--) {
    const i = a.length - t;
    const j = b.length - t;
    if (showA[i] || showB[j]) emit({ kind: 'same', a: i, b: j }, i, j);
  }
  if (out.length > 0 && (nextA < a.length || nextB < b.length))
    out.push({ kind: 'elided', a: a.length - nextA, b: b.length - nextB });
  return out;
}

/**
 * A shortest edit script turning n items into m items (`eq(x, y)`: item x of the first equals item y
 * of the second), as steps in order; null past MAX_EDIT_DISTANCE differences.
 */
function editScript(n: number, m: number, eq: (x: number, y: number) => boolean): Aligned['kind'][] | null {
  if (n === 0 || m === 0)
    return [...Array<Aligned['kind']>(n).fill('removed'), ...Array<Aligned['kind']>(m).fill('added')];
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  // v[offset + k] = furthest x on diagonal k (x − y = k). Before step d, the diagonals step d reads
  // (−d − 1 … d + 1) are kept, to walk the path back.
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && eq(x, y)) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) return null;
  const rev: Aligned['kind'][] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d]!;
    const at = (k: number) => prev[k + d + 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const pk = down ? k + 1 : k - 1;
    const px = at(pk);
    const py = px - pk;
    while (x > (down ? px : px + 1) && y > (down ? py + 1 : py)) {
      x--;
      y--;
      rev.push('same');
    }
    if (down) {
      y--;
      rev.push('added');
    } else {
      x--;
      rev.push('removed');
    }
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    rev.push('same');
  }
  return rev.reverse();
}
