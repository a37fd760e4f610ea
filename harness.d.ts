export * from './dist/harness/index';
