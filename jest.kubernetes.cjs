// The Jest preset of packages that load @kubernetes/client-node: 1.x and the OIDC libraries it
// pulls in ship only ES modules; let SWC turn them into CommonJS for Jest (Node itself loads
// them with require(esm)). Only *.spec.ts files are suites (helpers live in __tests__/ folders).
const preset = require('./jest.preset.cjs');
const esmOnly = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];

module.exports = {
  ...preset,
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.spec.ts'],
  transformIgnorePatterns: [`/node_modules/(?!\\.pnpm|${esmOnly.join('|')})`],
};
