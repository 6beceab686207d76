import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { TooLargeError } from '../store/index.ts';
import { processAlive } from '../store/common.ts';

/** This host in spool file names (with the pid: whose file it is). */
const HOST =
  hostname()
    .replace(/[^A-Za-z0-9-]/g, '-')
    .slice(0, 63) || 'host';

/** An upload written to local disk: where, its sha256 and size. Remove it with `discard`. */
export interface Spooled {
  path: string;
  sha256: string;
  size: number;
}

/**
 * Local disk for uploads in flight. A body is streamed here first — hashed and capped as it arrives —
 * so a slow client holds a file handle, never a database connection; the parser and the store then
 * read the finished file at disk speed.
 */
export class Spool {
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /**
   * Removes what crashed processes left behind, at start-up: a file of a process of this host that is
   * no longer running is a partial upload nobody will finish, and so is any file older than `olderThanMs`. Files of other hosts sharing the
   * directory (containers on one volume) go once they are older than `olderThanMs`.
   */
  sweepAbandoned(olderThanMs = 3600_000): number {
    let n = 0;
    for (const f of readdirSync(this.dir)) {
      const p = join(this.dir, f);
      const m = /^(?:([A-Za-z0-9-]+)\.)?(\d+)\.[0-9a-f]+\.upload$/.exec(f);
      try {
        const old = () => Date.now() - statSync(p).mtimeMs > olderThanMs;
        const ours = m && (m[1] === undefined || m[1] === HOST);
        // (A running pid of this host may be a new process that took a dead one's number: age decides then.)
        const abandoned = ours ? Number(m[2]) !== process.pid && (!processAlive(Number(m[2])) || old()) : old();
        if (abandoned) {
          unlinkSync(p);
          n++;
        }
      } catch {
        // gone already
      }
    }
    return n;
  }

  /** Streams `src` to a new file; beyond `maxBytes` throws TooLargeError and keeps nothing. */
  async write(src: AsyncIterable<Buffer | Uint8Array>, maxBytes: number): Promise<Spooled> {
    const path = join(this.dir, `${HOST}.${process.pid}.${randomBytes(12).toString('hex')}.upload`);
    const fh = await open(path, 'wx');
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of src) {
        size += chunk.length;
        if (size > maxBytes) throw new TooLargeError(maxBytes);
        hash.update(chunk);
        await fh.write(chunk);
      }
    } catch (e) {
      await fh.close().catch(() => undefined);
      await unlink(path).catch(() => undefined);
      throw e;
    }
    await fh.close();
    return { path, sha256: hash.digest('hex'), size };
  }

  /** The spooled bytes, the file opened only when first read (a source never read opens nothing). */
  async *read(s: Spooled): AsyncGenerator<Buffer> {
    yield* createReadStream(s.path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>;
  }

  async discard(s: Spooled): Promise<void> {
    await unlink(s.path).catch(() => undefined);
  }
}
