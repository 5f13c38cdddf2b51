const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.spec.ts'],
  // A control plane starts in about 4 s, but a minute and more on 2 busy cores.
  testTimeout: 150_000,
};
