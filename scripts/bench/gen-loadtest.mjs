// Generates large per-request load-test logs for the parsing benchmark by repeating the rows of a
// real sample and shifting their clocks, so every copy continues the run where the previous one
// ended. Output goes to a scratch directory (never the repository) and is reused while the source
// and row count are unchanged.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Writes `text` chunks with backpressure, batching lines so the writer is not the bottleneck. */
async function writeLines(path, rows, makeLine) {
  const out = createWriteStream(path);
  let batch = [];
  for (let i = 0; i < rows; i++) {
    batch.push(makeLine(i));
    if (batch.length === 8192) {
      if (!out.write(batch.join(''))) await new Promise((r) => out.once('drain', r));
      batch = [];
    }
  }
  if (batch.length) out.write(batch.join(''));
  await new Promise((resolve, reject) => out.end((e) => (e ? reject(e) : resolve())));
}

/** hey -o csv: rows keep their timings; the `offset` column (seconds since start) moves on per copy. */
export async function generateHeyCsv(source, path, rows) {
  const lines = readFileSync(source, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const header = lines[0];
  const body = lines.slice(1).map((l) => {
    const i = l.lastIndexOf(',');
    return [l.slice(0, i + 1), Number(l.slice(i + 1))];
  });
  const span = Math.max(...body.map((r) => r[1])) + 0.001;
  await writeLines(path, rows + 1, (i) => {
    if (i === 0) return `${header}\n`;
    const k = Math.floor((i - 1) / body.length);
    const [prefix, offset] = body[(i - 1) % body.length];
    return `${prefix}${(offset + k * span).toFixed(4)}\n`;
  });
}

/** vegeta encode (JSON lines): `seq` counts on and `timestamp` moves by one run length per copy. */
export async function generateVegetaJsonl(source, path, rows) {
  const lines = readFileSync(source, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const parsed = lines.map((l) => JSON.parse(l));
  const ns = parsed.map((r) => toNanos(r.timestamp));
  // biome-ignore lint/complexity/useMathMinMax: nanosecond timestamps are BigInts, which Math.min refuses
  const first = ns.reduce((a, b) => (a < b ? a : b));
  // biome-ignore lint/complexity/useMathMinMax: as above
  const last = ns.reduce((a, b) => (a > b ? a : b));
  const span = last - first + 1_000_000n;
  // Split each line around its seq and timestamp so a copy is three string joins, not a JSON encode.
  const parts = lines.map((l, i) => {
    const seqAt = l.indexOf(`"seq":${parsed[i].seq},`);
    const tsText = `"timestamp":"${parsed[i].timestamp}"`;
    const tsAt = l.indexOf(tsText);
    if (seqAt < 0 || tsAt < seqAt) throw new Error(`unexpected vegeta line layout: ${l.slice(0, 120)}`);
    return [l.slice(0, seqAt), l.slice(seqAt + `"seq":${parsed[i].seq},`.length, tsAt), l.slice(tsAt + tsText.length)];
  });
  await writeLines(path, rows, (i) => {
    const k = BigInt(Math.floor(i / lines.length));
    const j = i % lines.length;
    const [a, b, c] = parts[j];
    return `${a}"seq":${i},${b}"timestamp":"${fromNanos(ns[j] + k * span)}"${c}\n`;
  });
}

function toNanos(ts) {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(ts);
  if (!m) throw new Error(`unexpected timestamp ${ts}`);
  const secs = BigInt(Date.parse(`${m[1]}${m[3]}`)) / 1000n;
  return secs * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** RFC 3339 with nanoseconds, trailing zeros trimmed, as Go's time.RFC3339Nano prints UTC times. */
function fromNanos(n) {
  const secs = n / 1_000_000_000n;
  const frac = (n % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${new Date(Number(secs) * 1000).toISOString().slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

/** Returns the path of a generated file, generating it unless an identical one is already there. */
export async function ensureGenerated(kind, source, rows, dir) {
  mkdirSync(dir, { recursive: true });
  const tag = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 10);
  const ext = kind === 'hey' ? 'csv' : 'jsonl';
  const path = join(dir, `${kind}-${rows}-${tag}.${ext}`);
  if (existsSync(path) && statSync(path).size > 0) return { path, generated: false };
  const tmp = `${path}.partial`;
  if (kind === 'hey') await generateHeyCsv(source, tmp, rows);
  else await generateVegetaJsonl(source, tmp, rows);
  renameSync(tmp, path);
  return { path, generated: true };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [kind, source, rows, dir] = process.argv.slice(2);
  const r = await ensureGenerated(kind, source, Number(rows), dir ?? '/tmp/stagediff-bench');
  console.log(r.path);
}
