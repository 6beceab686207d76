import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The server's configuration, read once from the environment at start-up and validated. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Per uploaded file, bytes. */
  maxUploadBytes: number;
  /** Per profile once inflated, bytes. */
  maxDecompressedBytes: number;
  /** Base of share links; defaults to the request's own origin. */
  publicUrl: string | undefined;
  /** When set, creating a comparison needs `Authorization: Bearer <this>`. */
  writeToken: string | undefined;
  /** Seed the read-only demo comparison at /c/demo on first start. */
  seedDemo: boolean;
  /** Directory of the built web client (served at /). */
  webDist: string;
  logLevel: string;
  /** Analysis worker threads (0 = compute on the main thread). */
  analysisWorkers: number;
}

export class ConfigError extends Error {}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

function int(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be a boolean (1/0, true/false), got "${raw}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const publicUrl = env.PUBLIC_URL?.replace(/\/+$/, '') || undefined;
  if (publicUrl && !/^https?:\/\//.test(publicUrl))
    throw new ConfigError(`PUBLIC_URL must start with http:// or https://, got "${publicUrl}"`);
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.DATA_DIR || './data'),
    databaseUrl,
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 64 * 1024 * 1024, 1, 2 ** 40),
    maxDecompressedBytes: int(env, 'MAX_DECOMPRESSED_BYTES', 512 * 1024 * 1024, 1, 2 ** 40),
    publicUrl,
    writeToken: env.STAGEDIFF_WRITE_TOKEN || undefined,
    seedDemo: bool(env, 'STAGEDIFF_SEED_DEMO', true),
    webDist: resolve(env.WEB_DIST || `${repoRoot}web/dist`),
    logLevel: env.LOG_LEVEL || 'info',
    analysisWorkers: int(env, 'ANALYSIS_WORKERS', Math.min(2, availableParallelism()), 0, 64),
  };
}
