import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { type Parsed, ingest } from '../ingest/detect.ts';
import { FileError } from './flags.ts';

/** Reads and parses one file named on the command line; every failure names the file. */
export async function loadFile(path: string): Promise<Parsed> {
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    return await ingest({ name: basename(path), path });
  } catch (e) {
    throw new FileError(path, e);
  }
}
