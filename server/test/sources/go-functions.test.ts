/**
 * The Go function extents (sources/go-functions.ts) against Go's own parser: for every non-test file of
 * a few standard-library packages and of the demo service, go/ast's top-level function declarations
 * (name as the linker names it, first and last line) equal ours. And on real profiles: every sampled
 * line of the demo's own functions falls inside the declaration of the function the profile names.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import {
  declarationCandidates,
  enclosingFunction,
  goFunctions,
  goPackageName,
  goSymbolPackage,
} from '../../src/sources/go-functions.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';

const go = findGo();
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-go-functions-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// Prints "name start end" per top-level function declaration with a body, named as the linker does.
const AST_PROGRAM = `package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
)

func recv(e ast.Expr) string {
	star := false
	if s, ok := e.(*ast.StarExpr); ok {
		star, e = true, s.X
	}
	name := ""
	switch t := e.(type) {
	case *ast.Ident:
		name = t.Name
	case *ast.IndexExpr:
		name = t.X.(*ast.Ident).Name + "[...]"
	case *ast.IndexListExpr:
		name = t.X.(*ast.Ident).Name + "[...]"
	}
	if star {
		return "(*" + name + ")"
	}
	return name
}

func main() {
	pkg := os.Args[1]
	for _, path := range os.Args[2:] {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			panic(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				name = recv(fd.Recv.List[0].Type) + "." + name
			} else if fd.Type.TypeParams != nil {
				name += "[...]"
			}
			fmt.Printf("%s %s.%s %d %d\\n", path, pkg, name, fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line)
		}
	}
}
`;

function goFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'))
    .map((f) => join(dir, f));
}

describe.skipIf(!go)("Go's own parser agrees", () => {
  const goroot = go ? spawnSync(go, ['env', 'GOROOT'], { encoding: 'utf8' }).stdout.trim() : '';
  const cases: [string, string, string][] = [
    // [symbol package, directory, module path]
    ['net/http', join(goroot, 'src/net/http'), 'std'],
    ['encoding/json', join(goroot, 'src/encoding/json'), 'std'],
    ['slices', join(goroot, 'src/slices'), 'std'],
    ['main', join(fixturesDir, 'demo-service'), 'stagediff.local/demo-service'],
  ];
  it.each(cases)('%s: every top-level function, its name and its lines', (pkg, dir) => {
    const prog = join(tmp, 'ast.go');
    writeFileSync(prog, AST_PROGRAM);
    const files = goFiles(dir);
    const r = spawnSync(go!, ['run', prog, pkg, ...files], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(r.status, r.stderr).toBe(0);
    const want = r.stdout.trim().split('\n');
    expect(want.length).toBeGreaterThan(20);
    const ours: string[] = [];
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      expect(goPackageName(text)).not.toBeNull();
      for (const fn of goFunctions(text, pkg)) {
        ours.push(`${f} ${fn.name} ${fn.start} ${fn.end}`);
        expect(fn.text.startsWith('func')).toBe(true);
        expect(fn.text.endsWith('}')).toBe(true);
        expect(fn.text.split('\n').length).toBe(fn.end - fn.start + 1);
      }
    }
    expect(ours).toEqual(want);
  });
});

describe('names as the linker gives them', () => {
  it('main, a library package, a dotted last element', () => {
    expect(goSymbolPackage('example.com/m', 'cmd/x/main.go', 'main')).toBe('main');
    expect(goSymbolPackage('example.com/m', 'codec.go', 'm')).toBe('example.com/m');
    expect(goSymbolPackage('example.com/m', 'internal/codec/json.go', 'codec')).toBe('example.com/m/internal/codec');
    expect(goSymbolPackage('gopkg.in/yaml.v3', 'yaml.go', 'yaml')).toBe('gopkg.in/yaml%2ev3');
  });
  it('closures and wrappers belong to the function that holds them', () => {
    expect(enclosingFunction('main.(*service).routes.func1')).toBe('main.(*service).routes');
    expect(enclosingFunction('main.run.func2.1')).toBe('main.run');
    expect(enclosingFunction('main.F.deferwrap1')).toBe('main.F');
    expect(enclosingFunction('main.F')).toBe('main.F');
  });
  it('a closure of an inlined function may belong to the inlined one', () => {
    expect(declarationCandidates('main.run.metricsHandler.func6')).toEqual([
      'main.run.metricsHandler',
      'main.metricsHandler',
    ]);
    expect(declarationCandidates('main.(*service).routes.labelled.func1')).toEqual([
      'main.(*service).routes.labelled',
      'main.labelled',
      'main.routes.labelled',
    ]);
    expect(declarationCandidates('main.F')).toEqual(['main.F']);
  });
});

describe("the demo's profiles", () => {
  const demo = join(fixturesDir, 'demo');
  const stages = JSON.parse(readFileSync(join(demo, 'manifest.json'), 'utf8')).stages.map(
    (s: { name: string }) => s.name,
  ) as string[];
  it.each(stages)("%s: each sampled line of the service's own code lies in the function the profile names", (stage) => {
    const src = mkdtempSync(join(tmp, `${stage}-`));
    const run = join(demo, stage, 'run-1');
    expect(spawnSync('tar', ['-xzf', join(run, 'sources.tar.gz'), '-C', src]).status).toBe(0);
    const extents = new Map<string, { file: string; start: number; end: number }>();
    for (const f of goFiles(src))
      for (const fn of goFunctions(readFileSync(f, 'utf8'), 'main'))
        extents.set(fn.name, { file: f.slice(src.length + 1), start: fn.start, end: fn.end });
    const p = parsePprof(readFileSync(join(run, 'cpu.pb.gz')));
    let checked = 0;
    for (const fr of p.frames) {
      if (!fr.name.startsWith('main.') || fr.line <= 0) continue;
      const declared = declarationCandidates(fr.name).find((n) => extents.has(n));
      expect(declared, fr.name).toBeDefined();
      const e = extents.get(declared!);
      expect(fr.file.endsWith(`/${e!.file}`), `${fr.name} in ${fr.file}`).toBe(true);
      expect(fr.line, `${fr.name} line ${fr.line}`).toBeGreaterThanOrEqual(e!.start);
      expect(fr.line, `${fr.name} line ${fr.line}`).toBeLessThanOrEqual(e!.end);
      // the linker's own record of where the function starts (pprof's Function.start_line)
      if (fr.startLine && declared === fr.name) expect(e!.start, fr.name).toBe(fr.startLine);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });
});
