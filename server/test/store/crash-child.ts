/**
 * Child process for the crash tests: opens the store described by CRASH_CONFIG, starts the write
 * named by CRASH_MODE, prints "MARK <detail>" once it is in the middle of it, and then waits for
 * the SIGKILL the parent sends.
 */
import { openStore, type ByteSource, type StoreConfig } from '../../src/store/index.ts';
import { bytesOf } from './bytes.ts';

const config = JSON.parse(process.env.CRASH_CONFIG ?? '') as StoreConfig;
const mode = process.env.CRASH_MODE;
const comparisonId = process.env.CRASH_COMPARISON ?? '';
const stageId = process.env.CRASH_STAGE ?? '';
const forever = new Promise<never>(() => {
  setInterval(() => {}, 1 << 30); // keep the event loop alive
});

/** Bytes consumed before the child reports and stalls (CRASH_AFTER_BYTES, default 3 MiB). */
const stallAt = Number(process.env.CRASH_AFTER_BYTES || 3 * 1024 * 1024);

/** Yields 256 KiB chunks without end; after `stallAt` bytes have been consumed it reports and stalls. */
async function* endless(): ByteSource {
  let sent = 0;
  for (let i = 0; ; i++) {
    // Code after a `yield` runs only when the consumer asks for more, i.e. once it has written
    // everything yielded so far.
    if (sent >= stallAt) {
      process.stdout.write(`MARK ${sent}\n`);
      await forever;
    }
    const chunk = bytesOf(1000 + i, 256 * 1024);
    sent += chunk.length;
    yield chunk;
  }
}

async function* once(buf: Buffer): ByteSource {
  yield buf;
}

const store = await openStore({ ...config, sweepOnOpen: false });
switch (mode) {
  case 'put-blob-mid-stream':
    await store.putBlob(endless(), 64 * 1024 * 1024);
    break;
  case 'add-artifact-mid-stream':
    await store.addArtifact({
      comparisonId,
      stageId,
      kind: 'profile',
      format: 'pprof',
      filename: 'cpu.pb.gz',
      summary: {},
      src: endless(),
      maxBytes: 64 * 1024 * 1024,
    });
    break;
  case 'between-blob-and-row': {
    const ref = await store.putBlob(once(bytesOf(77, 2 * 1024 * 1024)), 64 * 1024 * 1024);
    process.stdout.write(`MARK ${ref.sha256}\n`);
    await forever;
    break;
  }
  default:
    throw new Error(`unknown CRASH_MODE ${mode}`);
}
process.stderr.write('crash child: the operation finished, which it should not have\n');
process.exit(3);
