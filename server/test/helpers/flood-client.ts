/**
 * The flooding client of the fair-share test, in a process of its own (as a visitor's machine would
 * be): CONNECTIONS loops, each sending GETs of distinct uncached views of one comparison back to back
 * for SECONDS, from 127.0.0.1. Prints one JSON line: the count of each status and the first answer of
 * every status other than 200 and 429.
 *
 *   node --import tsx flood-client.ts BASE COMPARISON BASE_STAGE TARGET_STAGE SECONDS CONNECTIONS
 */
import { Agent, request } from 'node:http';

const [base, id, fb, ft, seconds, connections] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const f = `/api/comparisons/${id}`;

/** Every request asks for something new: images of every width and noise floor, JSON of every cut and filter. */
function floodPath(n: number): string {
  const frac = (1 + (n % 9973)) / 1e7;
  switch (n % 6) {
    case 0:
      return `${f}/diff.png?base=${fb}&target=${ft}&noise=0.${n}&width=${300 + (n % 2100)}`;
    case 1:
      return `${f}/flamegraph.svg?stage=${fb}&minFraction=${frac}&width=${300 + (n % 2100)}`;
    case 2:
      return `${f}/diff?base=${fb}&target=${ft}&minFraction=${frac}`;
    case 3:
      return `${f}/top?stage=${ft}&focus=net/http|n${n}`;
    case 4:
      return `${f}/flamegraph?stage=${ft}&minFraction=${frac}&kind=allocs`;
    default:
      return `${f}/sandwich?stage=${fb}&fn=runtime.mallocgc&hide=h${n}`;
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: Number(connections), localAddress: '127.0.0.1' });
const mix: Record<number, number> = {};
const samples: Record<number, string> = {};

function get(path: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request(`${base}${path}`, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const s = res.statusCode ?? 0;
        mix[s] = (mix[s] ?? 0) + 1;
        if (s !== 200 && s !== 429 && samples[s] === undefined)
          samples[s] = Buffer.concat(chunks).toString('utf8').slice(0, 300);
        resolve();
      });
      res.on('error', () => resolve());
    });
    req.on('error', (e) => {
      mix[-1] = (mix[-1] ?? 0) + 1;
      samples[-1] ??= e.message;
      resolve();
    });
    req.end();
  });
}

const end = Date.now() + Number(seconds) * 1000;
let seq = 0;
await Promise.all(
  Array.from({ length: Number(connections) }, async () => {
    while (Date.now() < end) await get(floodPath(seq++));
  }),
);
agent.destroy();
process.stdout.write(`${JSON.stringify({ mix, samples })}\n`);
