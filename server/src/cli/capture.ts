import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { copyFileSync } from 'node:fs';
import { arch, availableParallelism, platform, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CaptureFile, CaptureLoad, CaptureRecord, CaptureRun, CaptureSummary } from '../model/capture.ts';
import { uploadedFiles } from '../api/capture-files.ts';
import { extraOutputFiles, isVegetaAttack, perRequestHint, toolVersion } from './load-tools.ts';
import { redactHeaders, redactSecrets, shellJoin } from './command-line.ts';
import { machineIdentity, sampleMachine } from './machine.ts';
import { postCapture, uploadToStage } from './upload.ts';
import { maxOf } from '../analysis/extent.ts';
import { DELTA_TYPES, SNAPSHOT_TYPES, type Options, parseOptions } from './capture-options.ts';
import {
  errorText,
  type FetchError,
  interrupt,
  cpuMicrosPerRequest,
  fetchProfile,
  profileUrl,
  readCpu,
  sampleCount,
  checkMetricsEndpoint,
  scrapeMetrics,
  takeTrace,
} from './capture-profiles.ts';
import { type RunningLoad, startCommand, autocannonVersion, startGenerator, readLoad } from './capture-load.ts';
import { Progress, fileEntry, iso, summaryLine, stagediffVersion, keepSources } from './capture-record.ts';

/**
 * `stagediff capture`: records one stage. Per run: start the load, wait for the warm-up, take the CPU
 * profile and the allocs/mutex/block deltas over one window, heap and goroutine at its end, wait for
 * the load to finish, then read back what was captured. Writes capture.json after every run, so a
 * failure keeps everything captured so far; uploads only when every run succeeded.
 */
export async function captureCommand(args: string[]): Promise<number> {
  const o = parseOptions(args);
  const progress = new Progress();
  const dir = resolve(
    o.out ?? mkdtempSync(join(tmpdir(), `stagediff-capture-${o.stage.replace(/[^A-Za-z0-9_-]/g, '_')}-`)),
  );
  mkdirSync(dir, { recursive: true });
  const tool = o.load.kind === 'command' ? o.load.tool : null;
  const load: CaptureLoad =
    o.load.kind === 'command'
      ? {
          kind: 'command',
          command: redactHeaders(shellJoin(o.load.argv)),
          tool,
          version: toolVersion(tool, o.load.argv),
        }
      : {
          kind: 'built-in',
          generator: autocannonVersion(),
          url: o.load.url,
          connections: o.load.connections,
          durationSeconds: o.load.duration,
          rate: o.load.rate,
          equivalentCommand: shellJoin([
            'autocannon',
            '-c',
            String(o.load.connections),
            '-d',
            String(o.load.duration),
            ...(o.load.rate !== null ? ['-R', String(o.load.rate)] : []),
            '--json',
            o.load.url,
          ]),
        };
  const record: CaptureRecord = {
    schema: 'stagediff-capture/1',
    stage: o.stage,
    note: o.note,
    command: shellJoin(['stagediff', 'capture', ...redactSecrets(args)]),
    pprof: o.pprof,
    profiles: [...o.profiles],
    traceSeconds: o.trace,
    metrics: o.metrics,
    load,
    build: o.build,
    host: {
      os: platform(),
      arch: arch(),
      cores: availableParallelism(),
      node: process.version,
      stagediff: stagediffVersion(),
      ...machineIdentity(),
    },
    startedAt: iso(),
    endedAt: null,
    runs: [],
    warnings: [],
    error: null,
  };
  const manifestPath = join(dir, 'capture.json');
  const save = () => writeFileSync(manifestPath, `${JSON.stringify(record, null, 2)}\n`);
  if (o.load.kind === 'command') {
    const hint = perRequestHint(tool, o.load.argv);
    if (hint) progress.line(`note: ${hint}`);
    if (!tool)
      progress.line(`note: "${o.load.argv[0]}" is not a load tool stagediff knows; its stdout is kept as load.txt`);
  }
  progress.line(
    `capturing stage "${o.stage}": ${o.runs} run${o.runs > 1 ? 's' : ''}, profile window ${o.seconds} s after ${o.warmup} s of warm-up; files in ${dir}`,
  );

  let interrupted = false;
  let current: RunningLoad | null = null;
  const onSignal = () => {
    interrupted = true;
    interrupt.abort();
    current?.stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let k = 1; k <= o.runs && !record.error && !interrupted; k++) {
      if (k > 1 && o.pause > 0) await sleep(o.pause * 1000);
      const run = await captureRun(o, load, k, dir, progress, (r) => {
        current = r;
      });
      record.runs.push(run);
      if (run.machine.busy) record.warnings.push(`run ${k}: ${run.warnings.find((w) => w.startsWith('machine busy'))}`);
      if (interrupted) run.error = 'interrupted: the load was stopped and the profiles in progress abandoned';
      if (run.error) record.error = `run ${k}: ${run.error}`;
      save();
      progress.line(summaryLine(run, o.runs));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.stopCountdown();
  }
  record.endedAt = iso();
  save();

  const files = uploadedFiles(record);
  const sourceArchive = record.error ? null : keepSources(o, record, dir, progress);
  if (record.error) {
    const kept = record.runs.flatMap((r) => r.files.map((f) => f.path));
    process.stderr.write(
      `stagediff: capture of stage "${o.stage}" failed: ${record.error}\n` +
        `  kept in ${dir}: capture.json${kept.length ? `, ${kept.join(', ')}` : ' (no other file was captured)'}\n` +
        (o.server ? '  nothing was uploaded; fix the cause and capture again\n' : ''),
    );
    return 1;
  }
  if (o.server) {
    const r = await uploadToStage({
      server: o.server,
      ...(o.comparison ? { comparison: o.comparison } : {}),
      ...(o.token ? { token: o.token } : {}),
      ...(o.title ? { title: o.title } : {}),
      stage: o.stage,
      ...(o.note ? { note: o.note } : {}),
      files: files.map((f) => ({ path: join(dir, f.path), name: f.name })),
      ...(sourceArchive ? { source: sourceArchive } : {}),
    });
    await postCapture(o.server, r, record);
    const failed = r.results.filter((x) => !x.ok);
    for (const x of failed) process.stderr.write(`stagediff: upload: ${x.error?.message ?? x.filename}\n`);
    if (r.created)
      process.stderr.write(
        `edit token (keep it secret; pass it with --comparison ${r.id} --token ... to add stages): ${r.token}\n`,
      );
    process.stdout.write(`${r.url}\n`);
    if (!o.out) rmSync(dir, { recursive: true, force: true });
    return failed.length > 0 ? 1 : 0;
  }
  process.stdout.write(`${manifestPath}\n`);
  return 0;
}

async function captureRun(
  o: Options,
  load: CaptureLoad,
  k: number,
  dir: string,
  progress: Progress,
  setCurrent: (r: RunningLoad | null) => void,
): Promise<CaptureRun> {
  const tag = `run ${k}/${o.runs}`;
  const prefix = o.runs > 1 ? `run-${k}/` : '';
  if (prefix) mkdirSync(join(dir, prefix), { recursive: true });
  progress.line(`${tag}: checking the machine is quiet (1 s)`);
  let m = await sampleMachine();
  const waitUntil = Date.now() + o.waitQuiet * 1000;
  const waitFrom = Date.now();
  if (m.busy && o.waitQuiet > 0) {
    progress.line(
      `${tag}: machine busy (${m.cpuIdlePercent}% idle); waiting up to ${o.waitQuiet} s for it to calm down`,
    );
    progress.countdown(`${tag}: waiting for a quiet machine`, waitUntil);
    while (m.busy && Date.now() < waitUntil && !interrupt.signal.aborted) m = await sampleMachine();
    progress.stopCountdown();
  }
  const waited = Math.round((Date.now() - waitFrom) / 100) / 10;
  const run: CaptureRun = {
    run: k,
    startedAt: iso(),
    endedAt: null,
    window: null,
    machine: {
      loadAverage: m.loadAverage,
      cpuIdlePercent: m.cpuIdlePercent,
      busy: m.busy,
      ...(o.waitQuiet > 0 ? { waitedForQuietSeconds: waited } : {}),
    },
    load: { startedAt: iso(), endedAt: null, exitCode: null, signal: null },
    files: [],
    summary: null,
    warnings: [],
    error: null,
  };
  if (m.reason) {
    run.warnings.push(m.reason);
    progress.line(`${tag}: WARNING: ${m.reason}`);
  }
  if (interrupt.signal.aborted) {
    run.endedAt = iso();
    return run;
  }
  // An unreachable or disabled pprof endpoint is found before any load runs.
  if (o.pprof && o.profiles.length > 0) {
    const index = `${o.pprof}/debug/pprof/`;
    try {
      const res = await fetch(index, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 404) throw new Error(`HTTP 404: net/http/pprof is not served there`);
    } catch (e) {
      run.error = `pprof endpoint ${index} is unreachable: ${e instanceof Error && e.message.startsWith('HTTP') ? e.message : errorText(e)}; the load was not started`;
      run.endedAt = iso();
      return run;
    }
  }

  if (o.metrics) {
    const problem = await checkMetricsEndpoint(o.metrics);
    if (problem) {
      run.error = `${problem}; the load was not started`;
      run.endedAt = iso();
      return run;
    }
  }

  const t0 = Date.now();
  run.load.startedAt = iso(t0);
  const loadLabel =
    o.load.kind === 'command'
      ? shellJoin(o.load.argv)
      : `built-in generator (${o.load.connections} connections${o.load.rate ? `, ${o.load.rate} req/s` : ''}, ${o.load.duration} s) → ${o.load.url}`;
  progress.line(`${tag}: load started: ${loadLabel}`);
  const running =
    o.load.kind === 'command'
      ? startCommand(o as Options & { load: { kind: 'command' } }, dir, prefix)
      : startGenerator(o as Options & { load: { kind: 'built-in' } }, dir, prefix);
  setCurrent(running);
  let loadEnd: number | null = null;
  const loadDone = running.done.then((r) => {
    loadEnd = Date.now();
    return r;
  });

  // Warm-up; the load must still be running when the window opens.
  progress.countdown(`${tag}: warm-up`, t0 + o.warmup * 1000);
  await Promise.race([sleep(o.warmup * 1000), loadDone]);
  progress.stopCountdown();
  const profileErrors: string[] = [];
  const wantWindow = (o.pprof !== null && o.profiles.length > 0) || o.trace !== null || o.metrics !== null;
  if (loadEnd === null && wantWindow) {
    const inWindow = o.profiles.filter((p) => p === 'cpu' || DELTA_TYPES.includes(p));
    const w0 = Date.now();
    const taken = [
      ...inWindow,
      ...(o.trace !== null ? [`a ${o.trace} s execution trace`] : []),
      ...(o.metrics !== null ? ['runtime metrics every second'] : []),
    ];
    progress.line(`${tag}: profile window open: ${taken.join(', ') || 'no interval profile'} over ${o.seconds} s`);
    progress.countdown(`${tag}: profiling`, w0 + o.seconds * 1000);
    const timeout = (o.seconds + 30) * 1000;
    const traceRel = `${prefix}trace.out`;
    const metricsRel = `${prefix}metrics.json`;
    const [fetched, traced, scraped] = await Promise.all([
      Promise.all(
        inWindow.map(async (type) => {
          const url = profileUrl(o.pprof!, type, o.seconds);
          const rel = `${prefix}${type}.pb.gz`;
          const from = Date.now();
          try {
            await fetchProfile(url, join(dir, rel), timeout);
            const to = Date.now();
            // A server that ignores ?seconds= answers at once with the cumulative profile.
            const span: CaptureFile['span'] =
              type === 'cpu' ? 'interval' : to - from < o.seconds * 500 ? 'cumulative' : 'delta';
            return { type, rel, url, from, to, span, error: null as string | null, status: 200 as number | null };
          } catch (e) {
            const fe = e as FetchError;
            return { type, rel, url, from, to: Date.now(), span: null, error: fe.message, status: fe.status ?? null };
          }
        }),
      ),
      o.trace !== null ? takeTrace(o.pprof!, o.trace, o.seconds, w0, join(dir, traceRel)) : null,
      o.metrics !== null ? scrapeMetrics(o.metrics, w0, o.seconds, join(dir, metricsRel)) : null,
    ]);
    progress.stopCountdown();
    const w1 = maxOf([w0, traced?.to ?? w0, scraped?.to ?? w0, ...fetched.map((f) => f.to)]);
    run.window = { start: iso(w0), end: iso(w1), seconds: o.seconds };
    if (traced) {
      if (traced.error) profileErrors.push(`trace: ${traced.error}`);
      else
        run.files.push(
          fileEntry(dir, traceRel, 'trace', {
            span: 'interval',
            url: traced.url,
            fetchedFrom: iso(traced.from),
            fetchedTo: iso(traced.to),
          }),
        );
    }
    if (scraped) {
      run.files.push(
        fileEntry(dir, metricsRel, 'metrics', { url: o.metrics!, fetchedFrom: iso(w0), fetchedTo: iso(scraped.to) }),
      );
      if (scraped.failed === scraped.scrapes)
        profileErrors.push(`metrics: every scrape failed (${scraped.firstError})`);
      else if (scraped.failed > 0)
        run.warnings.push(
          `metrics: ${scraped.failed} of ${scraped.scrapes} scrapes failed (first: ${scraped.firstError})`,
        );
    }
    for (const f of fetched) {
      if (f.error && f.type !== 'cpu' && f.status !== null && f.status >= 400 && f.status < 500 && f.status !== 404) {
        // The endpoint refuses ?seconds= for this profile: take the cumulative one and say so.
        const url = profileUrl(o.pprof!, f.type, null);
        try {
          await fetchProfile(url, join(dir, f.rel), 30_000);
          run.warnings.push(
            `${f.type}: the endpoint refused a ${o.seconds} s delta (${f.error}); kept the profile cumulative since the process started`,
          );
          run.files.push(
            fileEntry(dir, f.rel, 'profile', {
              profileType: f.type,
              span: 'cumulative',
              url,
              fetchedFrom: iso(f.to),
              fetchedTo: iso(),
            }),
          );
          continue;
        } catch (e) {
          f.error = `${f.error}; cumulative fallback: ${(e as Error).message}`;
        }
      }
      if (f.error) {
        profileErrors.push(`${f.type} profile: ${f.error}`);
        continue;
      }
      if (f.span === 'cumulative')
        run.warnings.push(
          `${f.type}: the endpoint ignored ?seconds= (answered at once): the profile is cumulative since the process started`,
        );
      run.files.push(
        fileEntry(dir, f.rel, 'profile', {
          profileType: f.type,
          span: f.span!,
          url: f.url,
          fetchedFrom: iso(f.from),
          fetchedTo: iso(f.to),
        }),
      );
    }
    for (const type of o.profiles.filter((p) => SNAPSHOT_TYPES.includes(p))) {
      const url = profileUrl(o.pprof!, type, null);
      const rel = `${prefix}${type}.pb.gz`;
      const from = Date.now();
      try {
        await fetchProfile(url, join(dir, rel), 30_000);
        run.files.push(
          fileEntry(dir, rel, 'profile', {
            profileType: type,
            span: 'snapshot',
            url,
            fetchedFrom: iso(from),
            fetchedTo: iso(),
          }),
        );
      } catch (e) {
        profileErrors.push(`${type} profile: ${(e as Error).message}`);
      }
    }
    for (const f of run.files)
      if ((f.profileType === 'mutex' || f.profileType === 'block') && (await sampleCount(join(dir, f.path))) === 0)
        run.warnings.push(
          `${f.profileType} profile has no samples: the service may not enable it (runtime.${f.profileType === 'mutex' ? 'SetMutexProfileFraction' : 'SetBlockProfileRate'})`,
        );
    if (loadEnd !== null && loadEnd < w1)
      run.warnings.push(
        `the load ended ${((w1 - loadEnd) / 1000).toFixed(1)} s before the profile window closed: the profiles include time without load (use a longer load or a shorter --seconds)`,
      );
    progress.line(`${tag}: profiles taken; waiting for the load to finish`);
  }
  const loadUntil = o.load.kind === 'built-in' ? t0 + o.load.duration * 1000 : null;
  if (loadUntil && loadEnd === null) progress.countdown(`${tag}: load finishing`, loadUntil);
  const result = await loadDone;
  progress.stopCountdown();
  setCurrent(null);
  run.load.endedAt = iso(loadEnd ?? Date.now());
  run.load.exitCode = result.exitCode;
  run.load.signal = result.signal;

  // The load's files, then what it printed, read back as the server will read it.
  let loadFigures: Awaited<ReturnType<typeof readLoad>> | null = null;
  for (const out of running.outputs) {
    const p = join(dir, out.rel);
    if (!existsSync(p)) continue;
    if (statSync(p).size === 0) {
      rmSync(p);
      continue;
    }
    if (o.load.kind === 'command' && isVegetaAttack(o.load.argv) && result.exitCode === 0) {
      run.files.push(fileEntry(dir, out.rel, 'raw', { command: load.kind === 'command' ? load.command : '' }));
      const jsonl = `${prefix}vegeta.jsonl`;
      const exe = o.load.argv[0] && basename(o.load.argv[0]) === 'vegeta' ? o.load.argv[0] : 'vegeta';
      const enc = spawnSync(exe, ['encode', '-to=json', p], { maxBuffer: 1 << 30 });
      if (enc.status === 0) {
        writeFileSync(join(dir, jsonl), enc.stdout);
        loadFigures = await readLoad(join(dir, jsonl));
        run.files.push(
          fileEntry(dir, jsonl, typeof loadFigures === 'string' ? 'raw' : 'loadtest', {
            command: `vegeta encode -to=json ${basename(out.rel)} > vegeta.jsonl`,
          }),
        );
      } else run.warnings.push(`vegeta encode failed: ${String(enc.stderr).trim().slice(0, 200)}`);
      continue;
    }
    const figures = await readLoad(p);
    const command = load.kind === 'command' ? load.command : load.equivalentCommand;
    run.files.push(fileEntry(dir, out.rel, typeof figures === 'string' ? 'raw' : 'loadtest', { command }));
    if (typeof figures === 'string') {
      if (result.exitCode === 0)
        run.warnings.push(`${out.rel}: stagediff cannot read it (${figures}); kept, not uploaded`);
    } else loadFigures ??= figures;
  }
  if (o.load.kind === 'command')
    for (const extra of extraOutputFiles(o.load.tool, o.load.argv)) {
      if (!existsSync(extra)) {
        run.warnings.push(`${extra}: the load command should have written it, but it is not there`);
        continue;
      }
      const rel = `${prefix}${basename(extra)}`;
      copyFileSync(extra, join(dir, rel));
      const figures = await readLoad(join(dir, rel));
      run.files.push(fileEntry(dir, rel, typeof figures === 'string' ? 'raw' : 'loadtest'));
    }
  for (const rel of running.sideRels) {
    const p = join(dir, rel);
    if (existsSync(p) && statSync(p).size > 0) run.files.push(fileEntry(dir, rel, 'raw'));
    else if (existsSync(p)) rmSync(p);
  }

  // Failures of the load come first: its exit status is what the user must fix.
  if (result.error) run.error = result.error;
  else if (result.exitCode !== 0 || result.signal) {
    const tail =
      running.stderrRel && existsSync(join(dir, running.stderrRel))
        ? readFileSync(join(dir, running.stderrRel), 'utf8').trim().split('\n').slice(-3).join(' | ').slice(0, 300)
        : '';
    const name = o.load.kind === 'command' ? (o.load.tool ?? o.load.argv[0]) : 'generator';
    const when = run.window ? '' : ' before the profile window opened';
    run.error = `${name} ${result.signal ? `was killed by ${result.signal}` : `exited with status ${result.exitCode}`}${when}${tail ? `: ${tail}` : ''}`;
    if (profileErrors.length > 0) run.error += `; ${profileErrors.join('; ')}`;
  } else if (!run.window && o.profiles.length > 0)
    run.error = `the load finished within the ${o.warmup} s warm-up: no profile window (the load must run longer than --warmup + --seconds)`;
  else if (profileErrors.length > 0) run.error = profileErrors.join('; ');
  else if (loadFigures === null || typeof loadFigures === 'string')
    run.error = `the load's output cannot be read as a load test${typeof loadFigures === 'string' ? ` (${loadFigures})` : ''}`;
  if (!run.error && profileErrors.length > 0) run.error = profileErrors.join('; ');

  const cpuFile = run.files.find((f) => f.profileType === 'cpu');
  const cpu = cpuFile ? await readCpu(join(dir, cpuFile.path)) : null;
  const lf = loadFigures && typeof loadFigures !== 'string' ? loadFigures : null;
  const summary: CaptureSummary = {
    rps: lf?.rps ?? null,
    requests: lf?.requests ?? null,
    errors: lf?.errors ?? null,
    p99Ms: lf?.p99 ?? null,
    cpuSeconds: cpu?.cpuSeconds ?? null,
    profileSeconds: cpu?.durationSeconds ?? null,
    cpuMicrosPerRequest: cpuMicrosPerRequest(cpu, lf?.rps),
  };
  run.summary = summary;
  if (lf?.errors) run.warnings.push(`the load saw ${lf.errors} errors`);
  run.endedAt = iso();
  return run;
}
