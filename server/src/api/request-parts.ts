import type { RequestPart } from '../model/trace-requests.ts';

/**
 * The words for each part of a traced request's time, one wording everywhere: the runtime rows
 * (`Slowest 1 % of traced requests, waiting on locks (sync)`), the Requests view and its tab. Plain
 * data (no schema library), so the web bundle imports it.
 */
export const REQUEST_PART_WORDS: Record<RequestPart, string> = {
  running: 'running',
  runnable: 'scheduler wait',
  syscall: 'in syscalls',
  network: 'waiting on the network',
  sync: 'waiting on locks (sync)',
  channel: 'waiting on channels',
  select: 'waiting in select',
  sleep: 'sleeping',
  gcWait: 'waiting for the GC',
  other: 'other waits',
  unknown: 'outside the trace',
};
