import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { infrastructureError } from '../../src/routes/errors.ts';
import { BlobStoreUnavailableError } from '../../src/store/index.ts';

const unavailable = { status: 503, code: 'storage-unavailable' };

/** The error Node gives for a connection to a port nobody listens on (a stopped database). */
function refused(): Promise<Error> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port: 1 });
    s.on('error', resolve);
  });
}

describe('infrastructureError: storage failures are 503 or 507, never 500', () => {
  it('maps a refused connection (a real socket error) to 503', async () => {
    expect(infrastructureError(await refused())).toMatchObject(unavailable);
  });

  it('maps a database host name that does not resolve (a stopped or replaced container) to 503', () => {
    // As Node reports them (getaddrinfo's codes); scripts/compose-smoke.sh stops the database
    // container for real and sees this answer.
    for (const code of ['ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])
      expect(infrastructureError(Object.assign(new Error(`getaddrinfo ${code} db`), { code })), code).toMatchObject(
        unavailable,
      );
  });

  it("maps PostgreSQL's statement timeout and pg's connect and read timeouts to 503", () => {
    const statement = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    expect(infrastructureError(statement)).toMatchObject(unavailable);
    for (const message of [
      'Query read timeout',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'timeout expired',
    ])
      expect(infrastructureError(new Error(message)), message).toMatchObject(unavailable);
  });

  it('maps an unusable blob store to 503 with a message that names no bucket or credential', () => {
    const e = new BlobStoreUnavailableError(
      'the blob store s3://secret-bucket/p/ refused the credentials or the access: InvalidAccessKeyId (HTTP 403)',
    );
    const mapped = infrastructureError(e);
    expect(mapped).toMatchObject(unavailable);
    expect(mapped!.message).toBe('the blob store (object storage) is unavailable; try again shortly');
  });

  it('leaves errors of the request itself alone', () => {
    expect(infrastructureError(new Error('boom'))).toBeNull();
    expect(infrastructureError(Object.assign(new Error('syntax'), { code: '42601' }))).toBeNull();
    expect(infrastructureError(null)).toBeNull();
  });
});
