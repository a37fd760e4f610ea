export * from './dist/harness/index.js';
