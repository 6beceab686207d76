/**
 * Readers for benchstat's own outputs (text tables and `-format csv`), and Go's `%.Nf` formatting, so
 * tests can hold our comparison against what the real benchstat printed.
 */

/** One data row of a benchstat table, with the cells as printed. */
export interface RefRow {
  /** `pkg:` header in force (full import path). */
  pkg: string;
  unit: string;
  name: string;
  base: { center: string; ci: string };
  target: { center: string; ci: string };
  /** `~`, `?`, or a signed percentage such as `-70.01%`. */
  delta: string;
  /** e.g. `p=0.000 n=10`. */
  pn: string;
}

/** Rows of `benchstat -format csv BASE TARGET` output (geomean rows left out). */
export function readBenchstatCsv(text: string): RefRow[] {
  const rows: RefRow[] = [];
  let pkg = '';
  let unit = '';
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const m = /^pkg: (.*)$/.exec(line);
    if (m) {
      pkg = m[1]!;
      continue;
    }
    if (/^[a-z]+: /.test(line)) continue; // goos, goarch, cpu
    const cells = line.split(',');
    if (cells[0] === '' && cells[2] === 'CI') {
      unit = cells[1]!;
      continue;
    }
    if (cells[0] === '') continue; // file-name header
    if (cells[0] === 'geomean') continue;
    if (cells.length !== 7) throw new Error(`unexpected benchstat CSV row: ${line}`);
    rows.push({
      pkg,
      unit,
      name: cells[0]!,
      base: { center: cells[1]!, ci: cells[2]! },
      target: { center: cells[3]!, ci: cells[4]! },
      delta: cells[5]!,
      pn: cells[6]!,
    });
  }
  return rows;
}

/** Rows of benchstat's default text output (geomean rows and footnotes left out). */
export function readBenchstatText(text: string): RefRow[] {
  const rows: RefRow[] = [];
  let pkg = '';
  let unit = '';
  let headerLines = 0;
  for (const line of text.split('\n')) {
    const m = /^pkg: (.*)$/.exec(line);
    if (m) {
      pkg = m[1]!;
      continue;
    }
    if (line.trim() === '' || /^[a-z]+: /.test(line) || /^[¹²³⁴⁵⁶⁷⁸⁹]/.test(line)) {
      headerLines = 0;
      continue;
    }
    if (line.includes('│')) {
      headerLines++;
      // Second header line: "│ sec/op │ sec/op vs base │".
      if (headerLines === 2) unit = line.split('│')[1]!.trim();
      continue;
    }
    if (line.startsWith('geomean')) continue;
    const r = /^(\S+)\s+(\S+) ±\s+(\S+)\s+(\S+) ±\s+(\S+)\s+(\S+) \((p=\S+ )?(n=\S+)\)/.exec(line);
    if (!r) throw new Error(`unexpected benchstat text row: ${line}`);
    rows.push({
      pkg,
      unit,
      name: r[1]!,
      base: { center: r[2]!, ci: r[3]! },
      target: { center: r[4]!, ci: r[5]! },
      delta: r[6]!,
      pn: `${r[7] ?? ''}${r[8]!}`,
    });
  }
  return rows;
}

/**
 * Go's `fmt.Sprintf("%.Nf", x)`: the exact binary value rounded to N decimals, exact halves to even.
 * (JavaScript's toFixed rounds exact halves away from zero.)
 */
export function goFixed(x: number, decimals: number): string {
  const s = Math.abs(x).toFixed(decimals);
  const exact = Math.abs(x).toFixed(100);
  const dot = exact.indexOf('.');
  const rest = exact.slice(dot + 1 + decimals);
  let out = s;
  if (/^50*$/.test(rest)) {
    // An exact half: toFixed went up; Go keeps the even neighbour.
    const down = exact.slice(0, dot + 1 + decimals).replace(/\.$/, '');
    const lastDigit = Number(down[down.length - 1]);
    if (lastDigit % 2 === 0) out = down;
  }
  return (x < 0 || Object.is(x, -0)) && /[1-9]/.test(out) ? `-${out}` : out;
}

/** `%+.2f` */
export function goSignedFixed2(x: number): string {
  const s = goFixed(x, 2);
  return s.startsWith('-') ? s : `+${s}`;
}

/**
 * The value of a number as benchstat's text table scales it (`680.5n`, `25.166µ`, `1.125Ki`, `316.7Mi`),
 * with the half-width of its last printed digit, so a test can check a median lies within print rounding.
 */
export function readScaled(cell: string): { value: number; halfUlp: number } {
  const m = /^(-?\d+(?:\.(\d+))?)([a-zA-Zµ]*)$/.exec(cell);
  if (!m) throw new Error(`unexpected scaled number: ${cell}`);
  const factors: Record<string, number> = {
    '': 1,
    n: 1e-9,
    µ: 1e-6,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
  };
  const f = factors[m[3]!];
  if (f === undefined) throw new Error(`unknown scale prefix in ${cell}`);
  const decimals = m[2]?.length ?? 0;
  return { value: Number(m[1]) * f, halfUlp: 0.5 * 10 ** -decimals * f };
}
