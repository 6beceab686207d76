/**
 * The build information a Go binary carries (what `go version -m BINARY` prints): the Go release that
 * built it, the main package's path, its module, and the build settings (`-pgo=…`, `-gcflags=…`,
 * `-tags=…`, `CGO_ENABLED`, `GOAMD64`, the VCS revision…). Read from the binary's bytes, so neither Go
 * nor the binary's platform is needed where it is read.
 *
 * Layout (Go 1.18 and later, every platform): a 16-byte-aligned header that opens with the 14 bytes
 * `\xff Go buildinf:`, then the pointer size and a flags byte; with flag bit 2 set the two strings
 * follow the 32-byte header inline, each a uvarint length and its bytes: the Go version, then the
 * module information — lines of tab-separated fields between two 16-byte sentinels. Binaries of older
 * releases point at the strings by address instead; they are refused, naming the reason.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export interface GoBuildInfo {
  /** e.g. go1.26.8 */
  goVersion: string;
  /** The main package's import path. */
  path: string;
  /** The main module and its version, e.g. `example.com/svc (devel)`; null when not a module build. */
  mainModule: string | null;
  /** Every `build` line as KEY=VALUE, in the binary's order (e.g. `-pgo=/src/default.pgo`, `GOAMD64=v1`). */
  settings: string[];
}

const MAGIC = Buffer.from('\xff Go buildinf:', 'latin1');
const HEADER = 32;
const CHUNK = 1 << 20;
/** The most a build-info header's two strings may take (module lists of big programs stay far below). */
const MAX_INFO_BYTES = 1 << 20;

export class BuildInfoError extends Error {}

/** Reads a Go binary's build information, scanning it in 1 MiB blocks for the header. */
export function readGoBuildInfo(file: string): GoBuildInfo {
  const fd = openSync(file, 'r');
  try {
    const block = Buffer.alloc(CHUNK + MAX_INFO_BYTES + HEADER);
    let offset = 0;
    for (;;) {
      const n = readSync(fd, block, 0, block.length, offset);
      if (n < HEADER) break;
      const data = block.subarray(0, n);
      for (let at = data.indexOf(MAGIC); at >= 0 && at < Math.min(n, CHUNK); at = data.indexOf(MAGIC, at + 1)) {
        if ((offset + at) % 16 !== 0) continue;
        return parseHeader(data.subarray(at), file);
      }
      if (n < block.length) break;
      offset += CHUNK;
    }
  } finally {
    closeSync(fd);
  }
  throw new BuildInfoError(`${file}: no Go build information in it (not a Go binary, or one built before Go 1.13)`);
}

function parseHeader(b: Buffer, file: string): GoBuildInfo {
  const flags = b[15]!;
  if ((flags & 2) === 0) {
    throw new BuildInfoError(
      `${file}: its build information is stored by address, as Go releases before 1.18 wrote it; rebuild with Go 1.18 or later`,
    );
  }
  let p = HEADER;
  const str = (): string => {
    let len = 0;
    let shift = 0;
    for (;;) {
      if (p >= b.length || shift > 28) throw new BuildInfoError(`${file}: damaged build information`);
      const c = b[p++]!;
      len |= (c & 0x7f) << shift;
      if (c < 0x80) break;
      shift += 7;
    }
    if (len > MAX_INFO_BYTES || p + len > b.length) throw new BuildInfoError(`${file}: damaged build information`);
    const s = b.toString('utf8', p, p + len);
    p += len;
    return s;
  };
  const goVersion = str();
  let mod = str();
  // The module text sits between two 16-byte sentinels, the last byte before the closing one a newline.
  if (mod.length >= 33 && mod[mod.length - 17] === '\n') mod = mod.slice(16, mod.length - 16);
  return { goVersion, ...parseModInfo(mod) };
}

/** `go version -m`'s lines: `path`, `mod`, `dep`, `=>` and `build`, fields separated by tabs. */
export function parseModInfo(text: string): Omit<GoBuildInfo, 'goVersion'> {
  let path = '';
  let mainModule: string | null = null;
  const settings: string[] = [];
  for (const line of text.split('\n')) {
    const [kind, a = '', b = ''] = line.split('\t');
    if (kind === 'path') path = a;
    else if (kind === 'mod') mainModule = b ? `${a} ${b}` : a;
    else if (kind === 'build') settings.push(unquoteSetting(line.slice('build\t'.length)));
  }
  return { path, mainModule, settings };
}

/** A build setting's value is Go-quoted when it holds a space, a quote, a tab or a newline. */
function unquoteSetting(kv: string): string {
  const eq = kv.indexOf('=');
  if (eq < 0) return kv;
  const value = kv.slice(eq + 1);
  if (!value.startsWith('"')) return kv;
  try {
    return `${kv.slice(0, eq)}=${JSON.parse(value) as string}`;
  } catch {
    return kv;
  }
}

/**
 * The settings that make two builds of the same code run differently — what a stage's conditions
 * compare. The VCS lines (revision, time, modified) are the change itself, not a condition; the
 * module paths say where it was built.
 */
export function comparableBuildSettings(info: Pick<GoBuildInfo, 'settings'>): string[] {
  return (Array.isArray(info.settings) ? info.settings : []).filter(
    (s): s is string => typeof s === 'string' && !s.startsWith('vcs.'),
  );
}
