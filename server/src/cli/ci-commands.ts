import { writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import { type ComparisonSource, serverSource } from '../client/comparison-source.ts';
import { folderSource } from './capture-folders.ts';
import { UsageError, parseFlags, stringFlag } from './flags.ts';
import { exitCode, formatResults } from './check.ts';
import { evaluate, failed, parseAllowDifferent, parseRule } from '../client/check-rules.ts';
import { buildReport, renderMarkdown } from './report.ts';
import { readPair } from '../client/pair.ts';
import { apiPath } from '../client/comparison-source.ts';
import { isProfileKind } from '../api/labels.ts';
import { PROFILE_KINDS } from '../api/options.ts';

const SOURCE_FLAGS = {
  server: 'string',
  comparison: 'string',
  out: 'strings',
  title: 'string',
  base: 'string',
  target: 'string',
  kind: 'string',
  'sample-type': 'string',
} as const;

async function openSource(f: ReturnType<typeof parseFlags>): Promise<ComparisonSource> {
  const outs = (f.values.out as string[] | undefined) ?? [];
  const comparison = stringFlag(f, 'comparison');
  if (outs.length > 0 && comparison) throw new UsageError('give either --out DIR... or --comparison, not both');
  if (outs.length > 0) return folderSource(outs, stringFlag(f, 'title') ?? 'Local capture');
  if (!comparison) throw new UsageError('needs --comparison ID (with --server URL) or --out DIR (a capture folder)');
  try {
    return serverSource(stringFlag(f, 'server'), comparison);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function topFlag(f: ReturnType<typeof parseFlags>): number {
  const t = stringFlag(f, 'top') ?? '20';
  const n = Number(t);
  if (!Number.isInteger(n) || n < 0 || n > 500)
    throw new UsageError(`--top must be an integer from 0 to 500, got "${t}"`);
  return n;
}

/** The base → target pair that --base, --target and --sample-type name (defaults: first → last stage). */
function pairFromFlags(
  src: ComparisonSource,
  f: ReturnType<typeof parseFlags>,
  top: number,
): ReturnType<typeof readPair> {
  const base = stringFlag(f, 'base');
  const target = stringFlag(f, 'target');
  const sampleType = stringFlag(f, 'sample-type');
  const kind = stringFlag(f, 'kind');
  if (kind !== undefined && !isProfileKind(kind))
    throw new UsageError(`--kind must be one of ${PROFILE_KINDS.join(', ')}; got "${kind}"`);
  return readPair(src, {
    ...(base ? { base } : {}),
    ...(target ? { target } : {}),
    ...(kind ? { kind } : {}),
    ...(sampleType ? { sampleType } : {}),
    top,
  });
}

/**
 * `stagediff report`: Markdown (default) or JSON for one base → target pair; `--output FILE` instead of
 * stdout, `--image FILE.svg|.png` saves the diff flamegraph.
 */
export async function reportCommand(args: string[]): Promise<number> {
  const f = parseFlags(args, { ...SOURCE_FLAGS, format: 'string', top: 'string', output: 'string', image: 'string' });
  const format = stringFlag(f, 'format') ?? 'markdown';
  if (format !== 'markdown' && format !== 'json')
    throw new UsageError(`--format must be markdown or json, got "${format}"`);
  const image = stringFlag(f, 'image');
  if (image && !['.svg', '.png'].includes(extname(image).toLowerCase()))
    throw new UsageError(`--image must name a .svg or .png file, got "${image}"`);
  const top = topFlag(f);
  const src = await openSource(f);
  try {
    const pair = await pairFromFlags(src, f, Math.max(top, 1));
    // (A server without PUBLIC_URL answers a relative share link: resolved against the origin reached.)
    const origin = src.publicUrl('/');
    const share = origin === null ? null : new URL(pair.comparison.url, origin).href;
    const report = buildReport(pair, { share, image: (p) => src.publicUrl(p) });
    let imageNote: string | undefined;
    if (image && pair.diffQuery) {
      const kind = extname(image).toLowerCase() === '.png' ? 'png' : 'svg';
      const { limit: _limit, ...q } = pair.diffQuery;
      writeFileSync(image, await src.getBytes(apiPath(src, kind === 'png' ? 'diffPng' : 'diffSvg', q)));
      process.stderr.write(`diff flamegraph saved as ${image}\n`);
      imageNote = `The diff flamegraph is saved as ${image}.`;
    } else if (!report.images.diffSvg)
      imageNote = 'No image link: this report was made from local capture folders (save one with --image FILE.svg).';
    const text =
      format === 'json'
        ? `${JSON.stringify(report, null, 2)}\n`
        : renderMarkdown(report, { top, ...(imageNote ? { imageNote } : {}) });
    const output = stringFlag(f, 'output');
    if (output) writeFileSync(output, text);
    else process.stdout.write(text);
    return 0;
  } finally {
    await src.close();
  }
}

/**
 * `stagediff check --fail-on RULE...`: exit 1 when a significant regression passes a rule. A rule
 * that cannot be judged (too few runs, no verdict, no data) passes unless `--too-few-runs fail`.
 */
export async function checkCommand(args: string[]): Promise<number> {
  const f = parseFlags(args, {
    ...SOURCE_FLAGS,
    'fail-on': 'strings',
    'too-few-runs': 'string',
    'allow-different': 'strings',
    json: 'boolean',
  });
  const ruleTexts = (f.values['fail-on'] as string[] | undefined) ?? [];
  if (ruleTexts.length === 0) throw new UsageError("check needs at least one --fail-on 'METRIC:±N%' (e.g. p99:+5%)");
  let rules: ReturnType<typeof parseRule>[];
  try {
    rules = ruleTexts.map(parseRule);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  let allow: ReturnType<typeof parseAllowDifferent>;
  try {
    allow = parseAllowDifferent((f.values['allow-different'] as string[] | undefined) ?? []);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const tooFew = stringFlag(f, 'too-few-runs') ?? 'pass';
  if (tooFew !== 'pass' && tooFew !== 'fail')
    throw new UsageError(`--too-few-runs must be pass or fail, got "${tooFew}"`);
  const opts = { failUnjudged: tooFew === 'fail' };
  const src = await openSource(f);
  try {
    const pair = await pairFromFlags(src, f, 1);
    const results = evaluate(rules, pair, allow);
    const bad = failed(results, opts);
    const code = exitCode(results, opts);
    if (f.values.json)
      process.stdout.write(
        `${JSON.stringify({ failed: bad, exitCode: code, base: pair.changes.base.name, target: pair.changes.target.name, conditions: { loadComparable: pair.changes.conditions.loadComparable, differences: pair.changes.conditions.differences, allowed: allow }, results: results.map((r) => ({ rule: r.rule.text, outcome: r.outcome, message: r.message, change: r.change })), tail: pair.changes.tail?.sentence ?? null, code: pair.changes.code ?? null }, null, 2)}\n`,
      );
    else process.stdout.write(formatResults(results, pair, { ...opts, allow }));
    return code;
  } finally {
    await src.close();
  }
}
