const preset = require('../../jest.preset.cjs');

module.exports = {
  ...preset,
  roots: ['<rootDir>/src'],
  testMatch: ['**/*.spec.ts'],
  // A control plane starts in about 4 s, longer on a busy machine.
  testTimeout: 60_000,
};
