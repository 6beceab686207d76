import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fetcher } from '../../src/services/profilers/guarded-fetch.ts';
import { fixturesDir } from './paths.ts';

/** Parca's recorded answers (fixtures/parca/answers.json, written by fixtures/parca/record.ts). */
export interface RecordedAnswer {
  request: string;
  status: number;
  body: string;
}

export const parcaWindow = JSON.parse(readFileSync(`${fixturesDir}parca/window.json`, 'utf8')) as {
  from: string;
  to: string;
  runs: number;
  selector: string;
  /** The demo's requests counter, for the runs' requests (asked of the Prometheus recorded beside Parca). */
  requestsQuery: string;
  /** The same build's second window (the A/A pair), answers in answers-again.json. */
  again: { from: string; to: string };
};

export function parcaAnswers(): RecordedAnswer[] {
  return JSON.parse(readFileSync(`${fixturesDir}parca/answers.json`, 'utf8')) as RecordedAnswer[];
}

/** The answers of the A/A window (fixtures/parca/answers-again.json). */
export function parcaAgainAnswers(): RecordedAnswer[] {
  return JSON.parse(readFileSync(`${fixturesDir}parca/answers-again.json`, 'utf8')) as RecordedAnswer[];
}

/** Both recordings by request (the two windows ask different requests; where one repeats, the answers are the same). */
function recorded(): Map<string, RecordedAnswer> {
  return new Map([...parcaAgainAnswers(), ...parcaAnswers()].map((a) => [a.request, a]));
}

/** A fetcher answering from the recording; a request it does not hold fails the test. */
export function replayFetcher(): Fetcher & { asked: string[] } {
  const byRequest = recorded();
  const asked: string[] = [];
  const f = async (url: URL) => {
    const key = `${url.pathname}${url.search}`;
    asked.push(key);
    const a = byRequest.get(key);
    if (!a) throw new Error(`not in the recording: ${key}`);
    return { status: a.status, body: Buffer.from(a.body, 'utf8') };
  };
  return Object.assign(f, { asked });
}

/** The recording served over HTTP on 127.0.0.1 (a stand-in Parca); `requests` counts what it was asked. */
export async function startParcaReplay(): Promise<{ server: Server; port: number; requests: string[] }> {
  const byRequest = recorded();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const a = byRequest.get(req.url ?? '');
    if (!a) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":5,"message":"not in the recording"}');
      return;
    }
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, requests };
}
