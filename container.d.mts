export * from './dist/container/index.js';
