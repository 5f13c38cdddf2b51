import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { createPrismaClient } from '@gantry/db';

/**
 * The suite's own guards, proven on a run of Jest with the project's configuration over two
 * fixture suites: one whose test, afterAll and timers hang, one beside it that must pass.
 * The run has to end by itself, fail, name the hang, let the other suite pass, and leave no
 * database and no Redis key behind.
 */
describe('a test made to hang', () => {
  const apiDir = resolve(__dirname, '../..');
  let out: string;
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('fails the run instead of hanging it, alone, and frees what it held', async () => {
    out = mkdtempSync(join(tmpdir(), 'gantry-guards-'));
    const report = join(out, 'report.json');
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        join(apiDir, 'node_modules/jest/bin/jest.js'),
        '--runInBand',
        '--testMatch',
        '<rootDir>/src/test-support/__fixtures__/*.fixture.ts',
        '--testTimeout',
        '4000',
        '--json',
        '--outputFile',
        report,
      ],
      { cwd: apiDir, env: { ...process.env, JEST_WORKER_ID: undefined }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    const seconds = (Date.now() - started) / 1000;

    expect({ code, seconds: seconds < 150 }).toEqual({ code: 1, seconds: true });
    const r = JSON.parse(readFileSync(report, 'utf8')) as {
      testResults: Array<{ name: string; status: string; assertionResults: Array<{ title: string; status: string; failureMessages: string[] }> }>;
    };
    const suite = (file: string) => r.testResults.find((t) => t.name.endsWith(file))!;
    const beside = suite('passes.fixture.ts');
    expect({ status: beside.status, failures: beside.assertionResults.flatMap((a) => a.failureMessages) }).toEqual({ status: 'passed', failures: [] });
    const hung = suite('hangs.fixture.ts');
    expect(hung.status).toBe('failed');
    const never = hung.assertionResults.find((a) => a.title === 'never finishes')!;
    expect(never.status).toBe('failed');
    expect(never.failureMessages.join('\n')).toMatch(/Exceeded timeout of 4000 ms/);

    // Nothing of the run is left: its databases (the run's and each system's copy) and its keys.
    const admin = createPrismaClient(Object.assign(new URL(process.env.DATABASE_URL!), { pathname: '/postgres' }).toString(), { max: 1 });
    const left = await admin.$queryRawUnsafe<Array<{ datname: string }>>(
      `SELECT datname::text AS datname FROM pg_database WHERE datname LIKE 'gantry\\_test\\_${child.pid}\\_%'`,
    );
    await admin.$disconnect();
    expect(left).toEqual([]);
    const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
    const keys = await redis.keys(`gantry-test-${child.pid}_*`);
    redis.disconnect();
    expect(keys).toEqual([]);
    if (code !== 1) console.error(stderr);
  }, 240_000);
});
