import type { FastifyRequest } from 'fastify';
import type { Store } from '../store/index.ts';
import { ApiError } from './errors.ts';

export function bearer(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : null;
}

/** Every change to a comparison needs its edit token: 401 without one, 403 with a wrong one. */
export async function requireEditToken(store: Store, req: FastifyRequest, comparisonId: string): Promise<void> {
  const c = await store.getComparison(comparisonId);
  if (!c) throw new ApiError(404, 'not-found', `no comparison ${comparisonId}`);
  if (c.readOnly) throw new ApiError(403, 'read-only', `comparison ${comparisonId} is read-only`);
  const token = bearer(req);
  if (!token)
    throw new ApiError(
      401,
      'unauthorized',
      "this change needs the comparison's edit token (Authorization: Bearer TOKEN)",
    );
  if (!(await store.verifyEditToken(comparisonId, token)))
    throw new ApiError(403, 'forbidden', 'the edit token does not match this comparison');
}
