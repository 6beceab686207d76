/**
 * Which stored source file a profile's frame refers to. Profiles carry the path the binary was built
 * with: absolute (`/home/ci/shop/internal/codec/json.go`) or, built with -trimpath, module-qualified
 * (`example.com/shop/internal/codec/json.go`). A source set's paths are module-relative, so a frame's
 * file matches a stored path that is a whole-component suffix of it; the longest such path wins.
 */

/** The package path of a Go function name: `example.com/shop/codec.(*T).M` → `example.com/shop/codec`. */
export function packageOf(funcName: string): string {
  const slash = funcName.lastIndexOf('/');
  const dot = funcName.indexOf('.', slash + 1);
  return dot < 0 ? funcName : funcName.slice(0, dot);
}

/**
 * Whether a function can live in the module: its package is `main` or under the module path. Keeps a
 * standard-library frame (`net/http/server.go`) from matching a module's own `server.go`.
 */
export function inModule(funcName: string, modulePath: string): boolean {
  if (modulePath === '') return true;
  const pkg = packageOf(funcName);
  return pkg === 'main' || pkg === modulePath || pkg.startsWith(`${modulePath}/`);
}

export class SourceIndex {
  private readonly byBase = new Map<string, string[]>();

  constructor(paths: Iterable<string>) {
    for (const p of paths) {
      const base = p.slice(p.lastIndexOf('/') + 1);
      const list = this.byBase.get(base) ?? [];
      list.push(p);
      this.byBase.set(base, list);
    }
  }

  /** The stored path a profile's file name refers to, or null. */
  match(filename: string): string | null {
    const f = filename.replace(/\\/g, '/');
    const base = f.slice(f.lastIndexOf('/') + 1);
    let best: string | null = null;
    for (const p of this.byBase.get(base) ?? [])
      if ((f === p || f.endsWith(`/${p}`)) && (best === null || p.length > best.length)) best = p;
    return best;
  }
}
