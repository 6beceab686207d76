/**
 * Go's `slices.SortFunc` (pattern-defeating quicksort), step for step. The trace reader sorts its
 * frontier of threads by the time of their next event when the earliest one cannot proceed, and
 * then tries them in that order; events of different threads often share a timestamp (the Linux
 * trace clock ticks every 64 ns), so the order among equal times decides which event comes first.
 * Go's sort is not stable, and any other algorithm could order ties differently, so this one
 * reproduces Go's exactly: same comparisons, same swaps, same pseudo-random pattern breaking.
 */
export function goSortFunc<T>(data: T[], cmp: (a: T, b: T) => number): void {
  pdqsort(data, 0, data.length, bitLength(data.length), cmp);
}

function bitLength(n: number): number {
  let b = 0;
  while (n > 0) {
    b++;
    n = Math.floor(n / 2);
  }
  return b;
}

function swap<T>(d: T[], i: number, j: number): void {
  const t = d[i]!;
  d[i] = d[j]!;
  d[j] = t;
}

function insertionSort<T>(d: T[], a: number, b: number, cmp: (x: T, y: T) => number): void {
  for (let i = a + 1; i < b; i++) {
    for (let j = i; j > a && cmp(d[j]!, d[j - 1]!) < 0; j--) swap(d, j, j - 1);
  }
}

function siftDown<T>(d: T[], lo: number, hi: number, first: number, cmp: (x: T, y: T) => number): void {
  let root = lo;
  for (;;) {
    let child = 2 * root + 1;
    if (child >= hi) return;
    if (child + 1 < hi && cmp(d[first + child]!, d[first + child + 1]!) < 0) child++;
    if (!(cmp(d[first + root]!, d[first + child]!) < 0)) return;
    swap(d, first + root, first + child);
    root = child;
  }
}

function heapSort<T>(d: T[], a: number, b: number, cmp: (x: T, y: T) => number): void {
  const first = a;
  const hi = b - a;
  for (let i = Math.floor((hi - 1) / 2); i >= 0; i--) siftDown(d, i, hi, first, cmp);
  for (let i = hi - 1; i >= 0; i--) {
    swap(d, first, first + i);
    siftDown(d, 0, i, first, cmp);
  }
}

const INCREASING = 1;
const DECREASING = 2;
const UNKNOWN = 0;

function pdqsort<T>(d: T[], a: number, b: number, limit: number, cmp: (x: T, y: T) => number): void {
  let wasBalanced = true;
  let wasPartitioned = true;
  for (;;) {
    const length = b - a;
    if (length <= 12) {
      insertionSort(d, a, b, cmp);
      return;
    }
    if (limit === 0) {
      heapSort(d, a, b, cmp);
      return;
    }
    if (!wasBalanced) {
      breakPatterns(d, a, b);
      limit--;
    }
    let [pivot, hint] = choosePivot(d, a, b, cmp);
    if (hint === DECREASING) {
      reverseRange(d, a, b);
      pivot = b - 1 - (pivot - a);
      hint = INCREASING;
    }
    if (wasBalanced && wasPartitioned && hint === INCREASING) {
      if (partialInsertionSort(d, a, b, cmp)) return;
    }
    if (a > 0 && !(cmp(d[a - 1]!, d[pivot]!) < 0)) {
      a = partitionEqual(d, a, b, pivot, cmp);
      continue;
    }
    const [mid, already] = partition(d, a, b, pivot, cmp);
    wasPartitioned = already;
    const leftLen = mid - a;
    const rightLen = b - mid;
    const balanceThreshold = Math.floor(length / 8);
    if (leftLen < rightLen) {
      wasBalanced = leftLen >= balanceThreshold;
      pdqsort(d, a, mid, limit, cmp);
      a = mid + 1;
    } else {
      wasBalanced = rightLen >= balanceThreshold;
      pdqsort(d, mid + 1, b, limit, cmp);
      b = mid;
    }
  }
}

function partition<T>(d: T[], a: number, b: number, pivot: number, cmp: (x: T, y: T) => number): [number, boolean] {
  swap(d, a, pivot);
  let i = a + 1;
  let j = b - 1;
  while (i <= j && cmp(d[i]!, d[a]!) < 0) i++;
  while (i <= j && !(cmp(d[j]!, d[a]!) < 0)) j--;
  if (i > j) {
    swap(d, j, a);
    return [j, true];
  }
  swap(d, i, j);
  i++;
  j--;
  for (;;) {
    while (i <= j && cmp(d[i]!, d[a]!) < 0) i++;
    while (i <= j && !(cmp(d[j]!, d[a]!) < 0)) j--;
    if (i > j) break;
    swap(d, i, j);
    i++;
    j--;
  }
  swap(d, j, a);
  return [j, false];
}

function partitionEqual<T>(d: T[], a: number, b: number, pivot: number, cmp: (x: T, y: T) => number): number {
  swap(d, a, pivot);
  let i = a + 1;
  let j = b - 1;
  for (;;) {
    while (i <= j && !(cmp(d[a]!, d[i]!) < 0)) i++;
    while (i <= j && cmp(d[a]!, d[j]!) < 0) j--;
    if (i > j) break;
    swap(d, i, j);
    i++;
    j--;
  }
  return i;
}

function partialInsertionSort<T>(d: T[], a: number, b: number, cmp: (x: T, y: T) => number): boolean {
  let i = a + 1;
  for (let step = 0; step < 5; step++) {
    while (i < b && !(cmp(d[i]!, d[i - 1]!) < 0)) i++;
    if (i === b) return true;
    if (b - a < 50) return false;
    swap(d, i, i - 1);
    if (i - a >= 2) {
      for (let j = i - 1; j >= 1; j--) {
        if (!(cmp(d[j]!, d[j - 1]!) < 0)) break;
        swap(d, j, j - 1);
      }
    }
    if (b - i >= 2) {
      for (let j = i + 1; j < b; j++) {
        if (!(cmp(d[j]!, d[j - 1]!) < 0)) break;
        swap(d, j, j - 1);
      }
    }
  }
  return false;
}

const MASK64 = (1n << 64n) - 1n;

function breakPatterns<T>(d: T[], a: number, b: number): void {
  const length = b - a;
  if (length < 8) return;
  let random = BigInt(length);
  const modulus = BigInt(2 ** bitLength(length));
  const base = a + Math.floor(length / 4) * 2;
  for (let idx = base - 1; idx <= base + 1; idx++) {
    random ^= (random << 13n) & MASK64;
    random ^= random >> 7n;
    random ^= (random << 17n) & MASK64;
    let other = Number(random & (modulus - 1n));
    if (other >= length) other -= length;
    swap(d, idx, a + other);
  }
}

function choosePivot<T>(d: T[], a: number, b: number, cmp: (x: T, y: T) => number): [number, number] {
  const l = b - a;
  const swaps = { n: 0 };
  let i = a + Math.floor(l / 4) * 1;
  let j = a + Math.floor(l / 4) * 2;
  let k = a + Math.floor(l / 4) * 3;
  if (l >= 8) {
    if (l >= 50) {
      i = median(d, i - 1, i, i + 1, swaps, cmp);
      j = median(d, j - 1, j, j + 1, swaps, cmp);
      k = median(d, k - 1, k, k + 1, swaps, cmp);
    }
    j = median(d, i, j, k, swaps, cmp);
  }
  if (swaps.n === 0) return [j, INCREASING];
  if (swaps.n === 12) return [j, DECREASING];
  return [j, UNKNOWN];
}

function order2<T>(d: T[], a: number, b: number, swaps: { n: number }, cmp: (x: T, y: T) => number): [number, number] {
  if (cmp(d[b]!, d[a]!) < 0) {
    swaps.n++;
    return [b, a];
  }
  return [a, b];
}

function median<T>(d: T[], a: number, b: number, c: number, swaps: { n: number }, cmp: (x: T, y: T) => number): number {
  [a, b] = order2(d, a, b, swaps, cmp);
  [b, c] = order2(d, b, c, swaps, cmp);
  [a, b] = order2(d, a, b, swaps, cmp);
  return b;
}

function reverseRange<T>(d: T[], a: number, b: number): void {
  let i = a;
  let j = b - 1;
  while (i < j) {
    swap(d, i, j);
    i++;
    j--;
  }
}
