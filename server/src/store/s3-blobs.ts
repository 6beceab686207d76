import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pieces, toBuffer } from './common.ts';
import { BlobStoreUnavailableError, StoreError } from './errors.ts';
import type { BlobStoreLocation } from './blob-store-url.ts';
import type { ByteSource } from './types.ts';

/*
 * Blob bytes in an S3-compatible bucket (the metadata stays in the database). Objects are written
 * under `<prefix>blobs/<id>`, one object per stored blob, by a plain PutObject when the bytes fit in
 * one part and by a multipart upload otherwise; the caller records each key in the database before
 * the first byte goes out, so a writer that dies mid-upload leaves a key that a sweep can find,
 * abort and delete (see postgres-store.ts).
 *
 * The client is the AWS SDK's, configured by its standard environment: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN, shared config files, web identity, …), AWS_REGION,
 * and AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL for an S3-compatible server, which is then addressed
 * path-style (http://host/bucket/key).
 */

export interface S3BlobsOptions {
  /** Bound of one request to the bucket (its connect included), ms. */
  timeoutMs?: number;
  /** Size of each part of a multipart upload (S3 wants at least 5 MiB for all but the last). */
  partBytes?: number;
  /** The environment the S3 client is configured from (tests pass their own). */
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
const MIN_PART_BYTES = 5 * 1024 * 1024;
/** S3 numbers parts 1..10000. */
const MAX_PARTS = 10_000;

/** Network failures of the HTTP client: the bucket cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);

interface S3Failure {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

export class S3Blobs {
  readonly location: BlobStoreLocation;
  /** `s3://bucket/prefix`, for messages. */
  readonly url: string;
  private readonly client: S3Client;
  private readonly partBytes: number;

  constructor(location: BlobStoreLocation, options: S3BlobsOptions = {}) {
    const env = options.env ?? process.env;
    this.location = location;
    this.url = `s3://${location.bucket}/${location.prefix}`;
    this.partBytes = Math.max(MIN_PART_BYTES, options.partBytes ?? DEFAULT_PART_BYTES);
    const endpoint = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
    const timeoutMs = options.timeoutMs ?? 30_000;
    const credentials =
      env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          }
        : undefined; // the SDK's default chain: shared files, web identity, container or instance roles
    this.client = new S3Client({
      region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
      ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      ...(credentials ? { credentials } : {}),
      // Checksums only where S3 requires them: servers that speak S3 do not all take the newer
      // checksum headers, and the store hashes every byte itself (sha256).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      requestHandler: {
        connectionTimeout: Math.min(5000, timeoutMs),
        requestTimeout: timeoutMs,
        throwOnRequestTimeout: true,
      },
    });
  }

  /** The key of a new object. */
  keyFor(id: string): string {
    return `${this.location.prefix}blobs/${id}`;
  }

  /**
   * Streams `src` into the object `key`, hashing as it goes. Beyond `maxBytes` throws
   * TooLargeError; on any failure a multipart upload in progress is aborted (best effort: a sweep
   * finishes the job when the bucket cannot be reached now).
   */
  async write(key: string, src: ByteSource, maxBytes: number): Promise<{ sha256: string; size: number }> {
    const hash = createHash('sha256');
    const partBytes = Math.max(this.partBytes, Math.ceil(maxBytes / MAX_PARTS));
    let size = 0;
    let uploadId: string | undefined;
    const parts: { ETag: string; PartNumber: number }[] = [];
    const { bucket } = this.location;
    const sendPart = async (body: Buffer): Promise<void> => {
      if (uploadId === undefined) {
        const created = await this.call(() =>
          this.client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key })),
        );
        uploadId = created.UploadId;
        if (!uploadId) throw new BlobStoreUnavailableError(`${this.url} started a multipart upload without an id`);
      }
      const PartNumber = parts.length + 1;
      const r = await this.call(() =>
        this.client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber,
            Body: body,
            ContentLength: body.length,
          }),
        ),
      );
      parts.push({ ETag: r.ETag ?? '', PartNumber });
    };
    try {
      let rest: Buffer = Buffer.alloc(0);
      for await (const { piece, last } of pieces(src, maxBytes, partBytes, hash)) {
        size += piece.length;
        if (last) rest = piece;
        else await sendPart(piece);
      }
      if (uploadId === undefined) {
        await this.call(() =>
          this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: rest, ContentLength: rest.length })),
        );
      } else {
        if (rest.length > 0) await sendPart(rest);
        await this.call(() =>
          this.client.send(
            new CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: key,
              UploadId: uploadId,
              MultipartUpload: { Parts: parts },
            }),
          ),
        );
      }
      return { sha256: hash.digest('hex'), size };
    } catch (e) {
      if (uploadId !== undefined) {
        const id = uploadId;
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: id }))
          .catch(() => undefined);
      }
      throw e;
    }
  }

  /** The whole object, or null when there is no such key. */
  async read(key: string): Promise<Buffer | null> {
    const body = await this.open(key);
    if (!body) return null;
    const parts: Buffer[] = [];
    try {
      for await (const c of body) parts.push(toBuffer(c as Buffer));
    } catch (e) {
      throw this.translate(e);
    }
    return Buffer.concat(parts);
  }

  /** The object as a stream, or null when there is no such key. */
  async open(key: string): Promise<Readable | null> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: key }));
      return r.Body as Readable;
    } catch (e) {
      if (isMissingKey(e)) return null;
      throw this.translate(e);
    }
  }

  /**
   * Deletes the object (a key that is not there is fine) and, unless the object is known complete,
   * aborts any multipart upload of the key first.
   */
  async remove(key: string, options: { complete?: boolean } = {}): Promise<void> {
    const { bucket } = this.location;
    const listed = options.complete
      ? { Uploads: [] }
      : await this.call(() => this.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key })));
    for (const u of listed.Uploads ?? []) {
      if (u.Key !== key || !u.UploadId) continue;
      await this.call(() =>
        this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: u.UploadId })),
      ).catch((e: unknown) => {
        if (!isMissingUpload(e)) throw e;
      });
    }
    await this.call(() => this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })));
  }

  /** Throws BlobStoreUnavailableError unless the bucket answers these credentials. */
  async check(): Promise<void> {
    await this.call(() => this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket })));
  }

  /** Objects under `<prefix>blobs/` (a consistency count: lists the whole prefix). */
  async count(): Promise<number> {
    let n = 0;
    let token: string | undefined;
    do {
      const r = await this.call(() =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.location.bucket,
            Prefix: `${this.location.prefix}blobs/`,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      n += r.KeyCount ?? r.Contents?.length ?? 0;
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return n;
  }

  close(): void {
    this.client.destroy();
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw this.translate(e);
    }
  }

  /**
   * The bucket's refusals and the network's failures become BlobStoreUnavailableError (a 503 for
   * clients, the reason in /healthz and the log); the store's own errors pass through.
   */
  private translate(e: unknown): unknown {
    if (e instanceof StoreError || e instanceof BlobStoreUnavailableError) return e;
    const f = (e ?? {}) as S3Failure;
    const status = f.$metadata?.httpStatusCode;
    const code = f.code ?? '';
    let why: string;
    if (NETWORK_CODES.has(code)) why = `cannot be reached (${code})`;
    else if (f.name === 'TimeoutError' || /timed? ?out/i.test(f.message ?? ''))
      why = 'did not answer in time (BLOB_STORE_TIMEOUT_MS)';
    else if (status === 403)
      why = `refused the credentials or the access: ${f.name && f.name !== 'Unknown' ? f.name : 'Forbidden'} (HTTP 403)`;
    else if (status === 404 && (f.name === 'NoSuchBucket' || f.name === 'NotFound'))
      why = `has no bucket "${this.location.bucket}" (HTTP 404)`;
    else if (status !== undefined) why = `refused the request: ${f.name ?? 'error'} (HTTP ${status})`;
    else why = `failed: ${f.name ?? 'error'}: ${f.message ?? String(e)}`;
    return new BlobStoreUnavailableError(`the blob store ${this.url} ${why}`, { cause: e });
  }
}

function isMissingKey(e: unknown): boolean {
  const f = (e ?? {}) as S3Failure;
  return f.name === 'NoSuchKey' || (f.name === 'NotFound' && f.$metadata?.httpStatusCode === 404);
}

function isMissingUpload(e: unknown): boolean {
  const cause = (e as { cause?: S3Failure } | null)?.cause;
  return cause?.name === 'NoSuchUpload';
}
