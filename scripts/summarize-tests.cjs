// Adds up the Jest and Playwright JSON reports of a run and prints one closing line:
// "N passed, N failed" (", N skipped" when any). Exits 1 when anything failed or nothing ran.
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const f of fs.readdirSync(dir)) {
  const r = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  if (f.startsWith('jest-')) {
    passed += r.numPassedTests;
    failed += r.numFailedTests + (r.numRuntimeErrorTestSuites || 0);
    skipped += r.numPendingTests + (r.numTodoTests || 0);
  } else if (f.startsWith('playwright')) {
    passed += r.stats.expected;
    failed += r.stats.unexpected + (r.stats.flaky || 0);
    skipped += r.stats.skipped;
    for (const e of r.errors || []) {
      failed += 1;
      console.error(e.message);
    }
  }
}
console.log(`Tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
