export * from './dist/container/index';
