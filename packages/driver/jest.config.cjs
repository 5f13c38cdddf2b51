// @kubernetes/client-node 1.x and the OIDC libraries it pulls in ship only ES modules; let SWC
// turn them into CommonJS for Jest (Node itself loads them with require(esm)).
const preset = require('../../jest.preset.cjs');
const esmOnly = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];

module.exports = {
  ...preset,
  roots: ['<rootDir>/src'],
  // Helpers live in __tests__/ folders; only *.spec.ts files are suites.
  testMatch: ['**/*.spec.ts'],
  transformIgnorePatterns: [`/node_modules/(?!\\.pnpm|${esmOnly.join('|')})`],
  // The first run transforms @kubernetes/client-node (a few seconds); later runs hit the cache.
  testTimeout: 15_000,
};
