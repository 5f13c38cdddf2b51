module.exports = {
  ...require('../../jest.preset.cjs'),
  roots: ['<rootDir>/src'],
  // Integration specs (*.int.spec.ts) use a database made for this run, dropped afterwards.
  globalSetup: '<rootDir>/test/global-setup.cjs',
  globalTeardown: '<rootDir>/test/global-teardown.cjs',
  testTimeout: 30000,
};
