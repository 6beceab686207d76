import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['server/test/**/*.test.ts', 'web/test/**/*.test.ts', 'web/src/**/*.test.ts'],
    // Guards against a hang, not measurements: sized so a test on a loaded 2-core machine is not cut off.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['server/test/global-setup.ts'],
  },
});
