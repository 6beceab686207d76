/**
 * go.sum's h1 hash of a module zip, computed on a thread of its own (hash-thread.ts) rather than on
 * the server's event loop, under bounds: the bytes inflated (`maxBytes`, the thread refuses past it),
 * the thread's heap, and a deadline after which the thread is stopped. Module fetches are few (one
 * per module version, at most SOURCE_GOPROXY_CONCURRENCY at once, then cached), so a thread per zip
 * costs little beside the hashing itself.
 */
import { Worker } from 'node:worker_threads';
import { DirHashError } from '../sources/dirhash.ts';
import type { HashJob, HashReply } from './hash-thread.ts';

/** The hashing took too long, or its thread failed: not a verdict on the zip (it may hash next time). */
export class HashUnfinished extends Error {}

/** The hashing thread's heap: file bytes are outside it, one file at a time, and the names and digests small. */
const THREAD_HEAP_MB = 64;

/** Threads started so far (tests read it: the hash was not computed on the event loop). */
export const hashThreads = { started: 0 };

/**
 * The h1 hash of the zip at `file`. Throws DirHashError when the zip cannot be hashed within
 * `maxBytes` (a zip64, a damaged entry, too large), HashUnfinished when `timeoutMs` passed first or
 * the thread failed.
 */
export function hashModuleZip(file: string, maxBytes: number, timeoutMs: number): Promise<string> {
  hashThreads.started++;
  const t = new Worker(new URL('./hash-thread-entry.mjs', import.meta.url), {
    workerData: { file, maxBytes } satisfies HashJob,
    resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
  });
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
      void t.terminate();
    };
    const timer = setTimeout(
      () => settle(() => reject(new HashUnfinished(`hashing the zip took longer than ${timeoutMs} ms`))),
      timeoutMs,
    );
    t.on('message', (m: HashReply) =>
      settle(() => {
        if (m.ok) resolve(m.h1);
        else reject(m.unhashable ? new DirHashError(m.message) : new HashUnfinished(m.message));
      }),
    );
    t.on('error', (e) => settle(() => reject(new HashUnfinished(`the hashing thread failed: ${e.message}`))));
    t.on('exit', (code) => settle(() => reject(new HashUnfinished(`the hashing thread exited with ${code}`))));
  });
}
