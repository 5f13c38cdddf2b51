module.exports = {
  ...require('../../jest.kubernetes.cjs'),
  // Each suite starts its own etcd + kube-apiserver: about 4 s, but a minute and more on 2 cores
  // busy with other work (startControlPlane() allows 100 s).
  testTimeout: 150_000,
};
