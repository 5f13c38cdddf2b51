import { createPrismaClient } from '@gantry/db';
import { checkInvariants } from './check';
import { formatReport } from './format';

/**
 * `pnpm run invariants [--settled] [--grace <seconds>]`: checks the database at DATABASE_URL.
 * Human summary on stderr, the JSON report on stdout; exit 1 on violations, 2 on errors.
 */
async function main(argv: string[]): Promise<number> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('invariants: DATABASE_URL is not set\n');
    return 2;
  }
  const graceAt = argv.indexOf('--grace');
  const graceSeconds = graceAt >= 0 ? Number(argv[graceAt + 1]) : undefined;
  if (graceSeconds !== undefined && !(graceSeconds >= 0)) {
    process.stderr.write('invariants: --grace needs a number of seconds\n');
    return 2;
  }
  const db = createPrismaClient(url, { max: 1 });
  try {
    const t0 = Date.now();
    const report = await checkInvariants(db, { settled: argv.includes('--settled'), graceSeconds });
    process.stderr.write(`${formatReport(report)}\n  took ${Date.now() - t0} ms\n`);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? 0 : 1;
  } finally {
    await db.$disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`invariants: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  },
);
