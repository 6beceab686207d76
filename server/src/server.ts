import { loadConfig, ConfigError, type Config } from './config.ts';
import { buildApp } from './app.ts';
import { DEMO_ID, seedDemo } from './services/seed.ts';
import { listeningText } from './logging.ts';

/** Starts the server: builds the app, seeds the demo if asked, listens, and shuts down gracefully. */
export async function startServer(config: Config = loadConfig()): Promise<void> {
  const app = await buildApp(config);
  if (config.seedDemo) {
    try {
      const r = await seedDemo(app.ctx);
      if (r) app.log.info({ comparison: 'demo', stages: r.stages, files: r.files }, 'seeded the demo comparison');
      for (const why of r?.sourcesRefused ?? []) app.log.warn(`the demo's sources were not stored: ${why}`);
    } catch (e) {
      app.log.error({ err: e }, 'seeding the demo comparison failed; the server runs without it');
    }
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // The line a person looks for: where the server is, and where the demo is when there is one.
  const demo = await app.ctx.store.getComparison(DEMO_ID).catch(() => null);
  await app.listen({
    port: config.port,
    host: config.host,
    listenTextResolver: listeningText(demo ? `/c/${DEMO_ID}` : null),
  });
}

export { ConfigError };
