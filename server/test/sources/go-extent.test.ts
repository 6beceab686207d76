// A function's extent from its text, checked against Go's own parser: for every top-level function of
// the Go files the repository carries (real programs, gofmt'd), functionEnd gives the line go/ast ends
// it on. Without Go, the cases below the comparison still run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionEnd } from '../../src/sources/go-extent.ts';

const REPO = join(import.meta.dirname, '../../..');

function goFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.go'))
    .map((e) => join(e.parentPath, e.name));
}

function hasGo(): boolean {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const LISTER = `package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
)

func main() {
	for _, name := range os.Args[1:] {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			panic(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				fmt.Printf("%s\\t%d\\t%d\\n", name, fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line)
			}
		}
	}
}
`;

describe('functionEnd', () => {
  it.skipIf(!hasGo())(
    "ends every function of the repository's Go files where go/ast ends it",
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'stagediff-go-extent-'));
      writeFileSync(join(dir, 'main.go'), LISTER);
      writeFileSync(join(dir, 'go.mod'), 'module lister\n\ngo 1.22\n');
      const files = goFiles(join(REPO, 'fixtures'));
      expect(files.length).toBeGreaterThan(10);
      const out = execFileSync('go', ['run', '.', ...files], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, GOFLAGS: '-mod=mod' },
      });
      const funcs = out
        .trim()
        .split('\n')
        .map((l) => l.split('\t'));
      expect(funcs.length).toBeGreaterThan(50);
      const text = new Map<string, string[]>();
      for (const [file, start, end] of funcs) {
        if (!text.has(file!)) text.set(file!, readFileSync(file!, 'utf8').split('\n'));
        expect({ file, start, end: functionEnd(text.get(file!)!, Number(start), 3000) }).toEqual({
          file,
          start,
          end: Number(end),
        });
      }
    },
    120_000,
  );

  it('knows a one-line function, a brace in a string or a signature, and says unknown past its bound', () => {
    const lines = [
      'func one() int { return 1 }',
      'func sig(x struct{}) string {',
      '\ts := "}"',
      '\treturn s + `{`',
      '}',
      'func long() {',
      '\ta()',
      '\tb()',
      '}',
      'func broken() {',
      'func next() {}',
    ];
    expect(functionEnd(lines, 1, 100)).toBe(1);
    expect(functionEnd(lines, 2, 100)).toBe(5);
    expect(functionEnd(lines, 6, 100)).toBe(9);
    expect(functionEnd(lines, 6, 2)).toBe(null);
    expect(functionEnd(lines, 10, 100)).toBe(null);
    expect(functionEnd(lines, 3, 100)).toBe(null);
  });
});
