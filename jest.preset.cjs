// Shared Jest setup: SWC transpiles TypeScript (and the ES-module NestJS packages) fast.
// Type-checking is done separately with `tsc --noEmit`.
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!\\.pnpm|@nestjs|file-type|load-esm|uid|strtok3|token-types|@tokenizer|uint8array-extras|@borewit|peek-readable)'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // Bounded even on a machine whose cores are busy with other work: a test or hook that passes
  // this fails (it does not hang the run).
  testTimeout: 30_000,
  // Every test closes what it opens (systems, servers, clients, timers), so Jest exits by itself;
  // this is only the last guard, so that a handle leaked by a future change cannot hold CI open.
  forceExit: true,
};
