import { ConfigError, loadConfig } from '../config.ts';
import { UsageError } from './flags.ts';

/** `stagediff serve`: the server `npm start` runs, configured from the environment. */
export async function serveCommand(args: string[]): Promise<number> {
  if (args.length > 0)
    throw new UsageError('serve takes no arguments; configure it with PORT, HOST, DATA_DIR, DATABASE_URL, ...');
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(`configuration: ${e.message}`);
    throw e;
  }
  const { startServer } = await import('../server.ts');
  await startServer(config);
  return new Promise<number>(() => undefined);
}
