import { appendAll } from '../analysis/extent.ts';

/**
 * The `stagediff capture` command that records a stage as the method asks: several runs (6 by default,
 * enough for benchstat's interval), the profiles taken inside each run's load window, the service's
 * sources kept, and the stage filed on the server when a comparison is named. The edit token is left
 * to the shell ($STAGEDIFF_TOKEN), never written into the command.
 */

export interface RecipeInput {
  pprofUrl: string;
  stage: string;
  note?: string | undefined;
  runs: number;
  loadCommand?: string[] | undefined;
  url?: string | undefined;
  server: string | null;
  comparison?: string | undefined;
  out?: string | undefined;
}

export interface Recipe {
  command: string;
  argv: string[];
  notes: string[];
}

/** A word as a POSIX shell reads it back unchanged: bare when it is plain, else single-quoted. */
export function shellWord(w: string): string {
  if (w !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(w)) return w;
  return `'${w.replaceAll("'", `'\\''`)}'`;
}

export function captureRecipe(r: RecipeInput): Recipe {
  const argv = ['npx', 'stagediff', 'capture', '--pprof', r.pprofUrl, '--stage', r.stage];
  const notes: string[] = [];
  if (r.note) argv.push('--note', r.note);
  argv.push('--runs', String(r.runs));
  if (r.runs < 4)
    notes.push(`${r.runs} runs per stage cannot reach a verdict at α = 0.05: record at least 4 (6 gives an interval).`);
  if (r.out) argv.push('--out', r.out);
  let tokenWord = false;
  if (r.server && r.comparison) {
    argv.push('--server', r.server, '--comparison', r.comparison, '--token', '$STAGEDIFF_TOKEN');
    tokenWord = true;
    notes.push("Set STAGEDIFF_TOKEN to the comparison's edit token first.");
  } else if (r.comparison) notes.push('No server to file on here: the files stay in --out.');
  if (r.loadCommand && r.loadCommand.length > 0) {
    argv.push('--');
    appendAll(argv, r.loadCommand);
  } else if (r.url) argv.push('--url', r.url);
  else notes.push('Give the load command after -- (the same tool and settings as the other stages), or --url URL.');
  notes.push(
    'Record every stage with the same load tool and settings on the same machine, taking turns between builds when the change is small.',
  );
  const command = argv
    .map((w) => (tokenWord && w === '$STAGEDIFF_TOKEN' ? '"$STAGEDIFF_TOKEN"' : shellWord(w)))
    .join(' ');
  return { command, argv, notes };
}
