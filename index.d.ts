export * from './dist/index';
