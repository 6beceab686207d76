/**
 * Errors of the services layer: what went wrong with a request for analysis or storage, in the
 * service's own terms. Only the HTTP layer (routes/errors.ts) turns them into status codes.
 *
 * - `not-found`: no such comparison, stage or artifact; `ambiguous-stage`: a name several stages share;
 * - `no-profile`, `no-benchmark`: the stage has no file of what the view needs;
 * - `no-requests`: per-request figures need a load test and profiles with a duration;
 * - `invalid-filter`, `invalid-request`: a parameter the service refuses (`param` names it);
 * - `duplicate`: the stage already holds these bytes (`existing` names the artifact);
 * - `busy`, `shutting-down`, `analysis-timeout`, `analysis-failed`: the analysis could not run now
 *   (`retryAfterSeconds` says when to try again);
 * - `too-large-to-analyse`: the input needs more than the analysis bounds allow;
 * - `rate-limited`: the client (or the comparison) has taken its share of the analysis for now
 *   (`retryAfterSeconds`);
 * - `comparison-quota`, `storage-quota`: an upload would take the comparison or the instance past
 *   its storage bound (MAX_COMPARISON_BYTES, MAX_STORAGE_BYTES);
 * - `too-large`: a part of a request is over its bound (`param` names it).
 * - `storage-unavailable`, `storage-full`: the database, blob store or disk failed (store/errors.ts
 *   `storageFailure`), met in an analysis worker.
 */
export type ServiceErrorCode =
  | 'not-found'
  | 'ambiguous-stage'
  | 'no-profile'
  | 'no-benchmark'
  | 'no-requests'
  | 'invalid-filter'
  | 'invalid-request'
  | 'duplicate'
  | 'busy'
  | 'shutting-down'
  | 'analysis-timeout'
  | 'analysis-failed'
  | 'too-large-to-analyse'
  | 'rate-limited'
  | 'comparison-quota'
  | 'storage-quota'
  | 'too-large'
  | 'storage-unavailable'
  | 'storage-full';

export class ServiceError extends Error {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    readonly detail: {
      /** The request parameter at fault. */
      param?: string;
      /** When trying again may work. */
      retryAfterSeconds?: number;
      /** The artifact already holding an upload's bytes. */
      existing?: { artifactId: string; filename: string };
    } = {},
  ) {
    super(message);
  }
}
