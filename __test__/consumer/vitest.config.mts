import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Vite transforms .ts/.mts by default; the CommonJS test file is .cts.
  oxc: { include: /\.(m?ts|cts)$/ },
  test: {
    include: ['test/**/*.test.{mts,cts}'],
    pool: 'forks',
    globalSetup: ['test/global-setup.mts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
