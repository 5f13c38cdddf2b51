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
  transformIgnorePatterns: [
    '/node_modules/(?!\\.pnpm|@nestjs|file-type|load-esm|uid|strtok3|token-types|@tokenizer|uint8array-extras|@borewit|peek-readable)',
  ],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
