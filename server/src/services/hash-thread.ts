/**
 * The thread that hashes one module zip (go.sum's h1, sources/dirhash.ts) away from the server's
 * event loop: the zip is inflated and every file's bytes go through SHA-256, seconds of CPU for a
 * large module. Started per zip by hashModuleZip (zip-hash.ts) with the file and its bound in
 * workerData; it posts one answer and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DirHashError, zipHash1 } from '../sources/dirhash.ts';

export interface HashJob {
  file: string;
  maxBytes: number;
}

export type HashReply = { ok: true; h1: string } | { ok: false; unhashable: boolean; message: string };

const job = workerData as HashJob;
let reply: HashReply;
try {
  reply = { ok: true, h1: await zipHash1(job.file, job.maxBytes) };
} catch (e) {
  reply = { ok: false, unhashable: e instanceof DirHashError, message: (e as Error)?.message ?? String(e) };
}
parentPort!.postMessage(reply);
