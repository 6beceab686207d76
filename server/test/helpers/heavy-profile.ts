/**
 * Folded stacks whose call paths are nearly all distinct: cheap to store and to parse, expensive to
 * turn into a call tree (one node per frame of almost every line). Seeded, so every run is the same.
 */
export function manyPathsFolded(lines: number, depth: number, seed = 7): string {
  let x = seed;
  const rnd = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x;
  };
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const frames = ['main'];
    for (let d = 0; d < depth; d++) frames.push(`pkg.fn${rnd() % 400}`);
    out.push(`${frames.join(';')} ${1 + (rnd() % 9)}`);
  }
  return `${out.join('\n')}\n`;
}
