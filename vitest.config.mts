import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['__test__/**/*.test.ts'],
    // The consumer project is a template run from its packed tarballs by .ci/steps/60-consumer.sh, never from here.
    exclude: [...configDefaults.exclude, '__test__/consumer/**'],
    // Native addons and worker threads do not mix well (napi-rs #3443): keep child processes.
    pool: 'forks',
    globalSetup: ['__test__/global-setup.ts'],
    // Two cores and one engine: files run one after another.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
