module.exports = {
  ...require('../../jest.kubernetes.cjs'),
  // The first run transforms @kubernetes/client-node (a few seconds); later runs hit the cache.
  testTimeout: 15_000,
};
