// @kubernetes/client-node 1.x and the OIDC libraries it pulls in ship only ES modules; let SWC
// turn them into CommonJS for Jest (Node itself loads them with require(esm)).
const preset = require('../../jest.preset.cjs');
const esmOnly = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];

module.exports = {
  ...preset,
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.spec.ts'],
  transformIgnorePatterns: [`/node_modules/(?!\\.pnpm|${esmOnly.join('|')})`],
  // Each suite starts its own etcd + kube-apiserver: about 4 s, but a minute and more on 2 cores
  // busy with other work (startControlPlane() allows 100 s).
  testTimeout: 150_000,
};
