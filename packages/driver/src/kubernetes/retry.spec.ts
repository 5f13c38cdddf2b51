/** Retries of API calls: transient failures, and the 401/403 of an API server warming up after a restart. */
const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });
const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

async function freshRetry() {
  jest.resetModules();
  return import('./retry.js');
}

describe('withTransientRetry', () => {
  it('refuses at once with a 403 when the server was never seen failing (a real refusal)', async () => {
    const { withTransientRetry } = await freshRetry();
    const call = jest.fn().mockRejectedValue(status(403));
    await expect(withTransientRetry(call, { timeoutMs: 5_000, initialMs: 1 })).rejects.toThrow('HTTP 403');
    expect(call).toHaveBeenCalledTimes(1);
  });

  it('retries the 403s of an API server that has just come back, until its RBAC cache answers', async () => {
    const { withTransientRetry } = await freshRetry();
    const call = jest.fn().mockRejectedValueOnce(refused()).mockRejectedValueOnce(status(503)).mockRejectedValueOnce(status(403)).mockResolvedValue('listed');
    await expect(withTransientRetry(call, { timeoutMs: 5_000, initialMs: 1, maxMs: 5 })).resolves.toBe('listed');
    expect(call).toHaveBeenCalledTimes(4);
  });

  it('counts an outage an informer saw: a later call retries its 403 too', async () => {
    const { withTransientRetry, noteApiFailure } = await freshRetry();
    noteApiFailure(refused());
    const call = jest.fn().mockRejectedValueOnce(status(401)).mockResolvedValue('ok');
    await expect(withTransientRetry(call, { timeoutMs: 5_000, initialMs: 1 })).resolves.toBe('ok');
  });

  it('never retries a 404 or a 422, outage or not', async () => {
    const { withTransientRetry, noteApiFailure } = await freshRetry();
    noteApiFailure(refused());
    for (const code of [404, 422]) {
      const call = jest.fn().mockRejectedValue(status(code));
      await expect(withTransientRetry(call, { timeoutMs: 5_000, initialMs: 1 })).rejects.toThrow(`HTTP ${code}`);
      expect(call).toHaveBeenCalledTimes(1);
    }
  });
});
