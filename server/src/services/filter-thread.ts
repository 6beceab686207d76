/**
 * A thread that compiles filter expressions (Go regular expressions, checked against pprof's limits)
 * away from the server's event loop: an expression near the limits takes milliseconds to compile,
 * and a client sending many distinct ones must not hold up every other request.
 */
import { parentPort } from 'node:worker_threads';
import { compileFilters, type FilterArgs } from './view-queries.ts';
import { ServiceError } from './errors.ts';

export type FilterCheckRequest = { id: number; args: FilterArgs };
export type FilterCheckReply = { id: number; ok: true } | { id: number; ok: false; message: string; param?: string };

parentPort!.on('message', (m: FilterCheckRequest) => {
  let reply: FilterCheckReply;
  try {
    compileFilters(m.args);
    reply = { id: m.id, ok: true };
  } catch (e) {
    reply =
      e instanceof ServiceError
        ? { id: m.id, ok: false, message: e.message, ...(e.detail.param ? { param: e.detail.param } : {}) }
        : { id: m.id, ok: false, message: `the filter could not be checked: ${(e as Error).message}` };
  }
  parentPort!.postMessage(reply);
});
