/**
 * Which files of a `stagediff capture` folder go to a server, one rule for every reader: `capture
 * --server`, the demo's seed and a capture folder taken in the browser. Plain data with no run-time
 * imports, so the web bundle imports it as it is.
 */
import type { CaptureFile } from '../model/capture.ts';

/** The file in a capture folder holding the module sources its profiles name (`capture --source`). */
export const SOURCES_ARCHIVE = 'sources.tar.gz';

/** Whether a capture's file of this role goes to the server: all but a tool's raw output (vegeta's .bin). */
export function isUploaded(role: CaptureFile['role']): boolean {
  return role !== 'raw';
}
