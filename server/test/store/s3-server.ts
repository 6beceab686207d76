/**
 * A real S3 server for the tests of the S3 blob store: versitygw (built from the Go module proxy by
 * scripts/install-versitygw.sh, which .ci/run calls) serving a temporary directory on a free
 * 127.0.0.1 port, with credentials of its own, so every request's signature is checked.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';

/** The versitygw binary: $STAGEDIFF_VERSITYGW, `versitygw` on the PATH, or the install script's cache. */
export function findVersitygw(): string | null {
  const cache = join(homedir(), '.cache', 'stagediff');
  const cached = existsSync(cache)
    ? readdirSync(cache)
        .filter((d) => d.startsWith('versitygw-'))
        .sort()
        .reverse()
        .map((d) => join(cache, d, 'versitygw'))
    : [];
  for (const c of [process.env.STAGEDIFF_VERSITYGW, 'versitygw', ...cached]) {
    if (!c || (c !== 'versitygw' && !existsSync(c))) continue;
    if (spawnSync(c, ['--version'], { encoding: 'utf8' }).status === 0) return c;
  }
  return null;
}

export function warnNoVersitygw(what: string): void {
  console.warn(
    [
      '',
      '**********************************************************************',
      `${`*  ${what} SKIPPED: no versitygw S3 server.`.padEnd(69)}*`,
      '*  scripts/install-versitygw.sh builds one (go install from the Go    *',
      '*  module proxy); .ci/run does, and CI fails without it.             *',
      '**********************************************************************',
      '',
    ].join('\n'),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect({ host: '127.0.0.1', port });
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

export class TestS3Server {
  readonly accessKey = `sd${randomBytes(6).toString('hex')}`;
  readonly secret = randomBytes(18).toString('base64url');
  readonly bucket = 'stagediff-test';
  private readonly dir = mkdtempSync(join(tmpdir(), 'stagediff-s3-'));
  private proc: ChildProcess | null = null;
  private port = 0;
  private client: S3Client | null = null;

  constructor(private readonly binary: string) {}

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The standard AWS environment a store reads to reach this server. */
  get env(): Record<string, string> {
    return {
      AWS_ACCESS_KEY_ID: this.accessKey,
      AWS_SECRET_ACCESS_KEY: this.secret,
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_S3: this.endpoint,
    };
  }

  /** Starts the server (again, on the same port and directory after `stop`). */
  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const proc = spawn(
      this.binary,
      [
        '--port',
        `127.0.0.1:${this.port}`,
        '--access',
        this.accessKey,
        '--secret',
        this.secret,
        '--quiet',
        'posix',
        this.dir,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    proc.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-2000);
    });
    this.proc = proc;
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) throw new Error(`versitygw exited: ${err}`);
      if (await accepts(this.port)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!this.client) {
      this.client = new S3Client({
        region: 'us-east-1',
        endpoint: this.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: this.accessKey, secretAccessKey: this.secret },
      });
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    }
  }

  /** Stops the server (a SIGKILL: the bucket vanishes from the network at once). */
  async stop(): Promise<void> {
    const p = this.proc;
    this.proc = null;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await gone;
  }

  async close(): Promise<void> {
    await this.stop();
    this.client?.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Keys of the objects under `prefix`. */
  async objects(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const r = await this.client!.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  /** Keys of the multipart uploads begun and neither completed nor aborted under `prefix`. */
  async openUploads(prefix: string): Promise<string[]> {
    const r = await this.client!.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix }));
    return (r.Uploads ?? []).map((u) => u.Key ?? '').sort();
  }

  async read(key: string): Promise<Buffer> {
    const r = await this.client!.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  }
}

/** A started server, or null (with a loud warning) where versitygw is not installed. */
export async function startS3Server(what: string): Promise<TestS3Server | null> {
  const bin = findVersitygw();
  if (!bin) {
    warnNoVersitygw(what);
    return null;
  }
  const s = new TestS3Server(bin);
  await s.start();
  return s;
}
