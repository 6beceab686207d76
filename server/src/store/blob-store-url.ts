/*
 * The BLOB_STORE setting, parsed without loading the S3 client (configuration is read by commands
 * that never open a store).
 */

/** Where blobs go: `s3://bucket/prefix`, the prefix empty or ending in `/`. */
export interface BlobStoreLocation {
  bucket: string;
  prefix: string;
}

/** Parses `s3://bucket[/prefix]`; throws an Error whose message names the problem. */
export function parseBlobStoreUrl(url: string): BlobStoreLocation {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  if (!m) throw new Error(`must be s3://bucket or s3://bucket/prefix, got "${url}"`);
  const bucket = m[1]!;
  // The DNS-compatible bucket names of S3's rules (3-63 characters, lowercase, digits, dots, hyphens).
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..'))
    throw new Error(`"${bucket}" is not a valid bucket name (3-63 characters: a-z 0-9 . -)`);
  let prefix = (m[2] ?? '').replace(/\/+$/, '');
  if (prefix !== '' && prefix.split('/').some((p) => p === '' || p === '.' || p === '..'))
    throw new Error(`the prefix "${prefix}" has an empty, "." or ".." segment`);
  if ([...prefix].some((ch) => ch.charCodeAt(0) < 0x20 || ch === '\x7f' || ch === '\\'))
    throw new Error('the prefix has a control character or a backslash');
  if (prefix !== '') prefix += '/';
  return { bucket, prefix };
}
