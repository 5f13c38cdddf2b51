export * from './common';
export * from './tenancy';
export * from './cluster';
export * from './jobs';
export * from './api-keys';
