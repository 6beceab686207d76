/**
 * Which Go module version a profile's file belongs to, and how the module proxy protocol names it.
 *
 * A profile names a dependency's file as the build saw it: in the module cache
 * (`/root/go/pkg/mod/github.com/!burnt!sushi/toml@v1.4.0/decode.go`, the path escaped) or, built with
 * -trimpath, as `module@version/…` (`github.com/BurntSushi/toml@v1.4.0/decode.go`, not escaped). A
 * standard-library file is under GOROOT (`/usr/local/go/src/fmt/print.go`) or, with -trimpath, its
 * import path (`fmt/print.go`). The function's package (its name up to the first dot after the last
 * slash) says which part of the path is the module; nothing here trusts the path beyond that.
 */
import { checkSourcePath } from './source-set.ts';

/** A file of a module version, by its path inside the module's zip (without the `module@version/` prefix). */
export interface ModuleFile {
  module: string;
  version: string;
  path: string;
  /** The h1 hash the stage's go.sum records for the module's zip: the text is given only when it matches. */
  sum?: string;
}

/** What a profile's file refers to outside the stage's own module. */
export type ForeignFile = { kind: 'module'; file: ModuleFile } | { kind: 'std'; path: string };

/** A Go release as `go version` and client_golang's go_info name it (go1.26.8, go1.23rc1). */
export const GO_RELEASE = /^go1\.\d{1,3}(\.\d{1,3})?((rc|beta)\d{1,3})?$/;

/** The module the standard library is fetched from: one build of the Go toolchain. */
export const TOOLCHAIN_MODULE = 'golang.org/toolchain';

const ELEMENT = /^[A-Za-z0-9._~+-]+$/;

/** Whether `s` is a module path stagediff asks a proxy for: `/`-separated safe elements, the first with a dot. */
export function isModulePath(s: string): boolean {
  if (s.length === 0 || s.length > 300) return false;
  const parts = s.split('/');
  if (!parts[0]!.includes('.')) return false;
  return parts.every((p) => ELEMENT.test(p) && p !== '.' && p !== '..' && !p.startsWith('.') && !p.endsWith('.'));
}

/** Whether `v` is a module version as the proxy protocol takes it (`v1.2.3`, pseudo-versions, `+incompatible`). */
export function isModuleVersion(v: string): boolean {
  return v.length <= 128 && /^v[0-9][0-9A-Za-z.+-]*$/.test(v);
}

/** The proxy protocol's case encoding: each upper-case letter becomes `!` and its lower case. */
export function escapeModulePath(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);
}

/** The inverse of `escapeModulePath`; null when `s` is not a valid escaped path (an upper-case letter, a bare `!`). */
export function unescapeModulePath(s: string): string | null {
  if (/[A-Z]/.test(s)) return null;
  let bad = false;
  const out = s.replace(/!(.?)/g, (_, c: string) => {
    if (!/^[a-z]$/.test(c)) bad = true;
    return c.toUpperCase();
  });
  return bad ? null : out;
}

/** The zip's URL path under the proxy: `/<escaped module>/@v/<escaped version>.zip`. */
export function moduleZipPath(module: string, version: string): string {
  return `/${escapeModulePath(module)}/@v/${escapeModulePath(version)}.zip`;
}

/** The package path of a Go function name: `example.com/shop/codec.(*T).M` → `example.com/shop/codec`. */
function packageOf(funcName: string): string {
  const slash = funcName.lastIndexOf('/');
  const dot = funcName.indexOf('.', slash + 1);
  return dot < 0 ? funcName : funcName.slice(0, dot);
}

/** A standard-library package path: its first element has no dot (`net/http`, `runtime`, `vendor/golang.org/x/…`). */
export function isStdPackage(pkg: string): boolean {
  const first = pkg.split('/')[0]!;
  return pkg !== 'main' && first !== '' && !first.includes('.') && ELEMENT.test(first);
}

function safe(path: string): string | null {
  const c = checkSourcePath(path);
  return 'path' in c && c.path !== '' ? c.path : null;
}

/**
 * What file `filename` (as the profile names it) is, given the function it holds: a file of a module
 * version, a standard-library file (its path under GOROOT/src), or null (the stage's own code, a
 * vendored copy, or a path that names no version).
 */
export function foreignFile(filename: string, funcName: string): ForeignFile | null {
  const f = filename.replace(/\\/g, '/');
  const pkg = packageOf(funcName);
  if (pkg === 'main' || pkg === '') return null;
  if (isStdPackage(pkg)) {
    let rel: string | null = null;
    if (f.startsWith('$GOROOT/src/')) rel = f.slice('$GOROOT/src/'.length);
    else if (f.startsWith('GOROOT/src/')) rel = f.slice('GOROOT/src/'.length);
    else if (f.startsWith('/') || /^[A-Za-z]:\//.test(f)) {
      const at = f.lastIndexOf('/src/');
      if (at >= 0) rel = f.slice(at + '/src/'.length);
    } else if (!f.split('/')[0]!.includes('.') && !f.includes('@')) rel = f; // -trimpath: the import path
    const path = rel === null ? null : safe(rel);
    return path === null ? null : { kind: 'std', path };
  }
  const base = f.slice(f.lastIndexOf('/') + 1);
  const parts = pkg.split('/');
  // The longest module path that is a prefix of the package and is followed by @version in the file's path.
  for (let n = parts.length; n >= 1; n--) {
    const module = parts.slice(0, n).join('/');
    const sub = parts.slice(n).join('/');
    const tail = `/${sub ? `${sub}/` : ''}${base}`;
    if (!f.endsWith(tail)) continue;
    const head = f.slice(0, f.length - tail.length);
    const at = head.lastIndexOf('@');
    if (at < 0) continue;
    const before = head.slice(0, at);
    const rawVersion = head.slice(at + 1);
    for (const [form, escaped] of [
      [escapeModulePath(module), true],
      [module, false],
    ] as const) {
      if (before !== form && !before.endsWith(`/${form}`)) continue;
      const version = escaped ? unescapeModulePath(rawVersion) : rawVersion;
      if (version === null || !isModuleVersion(version) || !isModulePath(module)) return null;
      const path = safe(tail.slice(1));
      return path === null ? null : { kind: 'module', file: { module, version, path } };
    }
  }
  return null;
}

/** The toolchain module version holding a Go release's sources: `v0.0.1-go1.26.8.linux-amd64`. */
export function toolchainVersion(goRelease: string, platform: string): string {
  return `v0.0.1-${goRelease}.${platform}`;
}

/**
 * Whether a release has a toolchain module: Go 1.21 and later (the first published that way), a
 * patch release (`go1.22.0`) or a pre-release (`go1.22rc1`); `go1.22` alone is a language version,
 * never a toolchain.
 */
export function hasToolchainModule(goRelease: string): boolean {
  const m = /^go1\.(\d+)(\.\d+|rc\d+|beta\d+)$/.exec(goRelease);
  return m !== null && Number(m[1]) >= 21;
}

/** The `toolchain` directive of a go.mod (`toolchain go1.26.8`), or null. */
export function toolchainDirective(goMod: string): string | null {
  for (const line of goMod.split('\n')) {
    const m = /^\s*toolchain\s+(go1\.\S+)\s*(\/\/.*)?$/.exec(line);
    if (m) return m[1]!;
  }
  return null;
}
