import { defineConfig } from '@playwright/test';

/** Run through scripts/e2e.sh, which starts the system and sets E2E_* variables. */
export default defineConfig({
  testDir: '.',
  timeout: 60_000,
  expect: { timeout: 20_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Ends the run with its report before scripts/test.sh's own limit for this stage (25 min).
  globalTimeout: 20 * 60_000,
  // The HTML report keeps the screenshots a spec attaches (every page at 390 and 1440 px: ui/screens.spec.ts).
  reporter: [['list'], ['json', { outputFile: 'test-results/results.json' }], ['html', { outputFolder: 'test-results/html', open: 'never' }]],
  outputDir: 'test-results/artifacts',
  use: {
    baseURL: process.env.E2E_CONSOLE_URL ?? 'http://127.0.0.1:3100',
    screenshot: 'only-on-failure',
    trace: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  projects: [
    { name: 'api', testMatch: /api\/.*\.spec\.ts/ },
    { name: 'ui', testMatch: /ui\/.*\.spec\.ts/ },
    // The system on a real kube-apiserver with the kube-emulator (GANTRY_E2E_DRIVER=kubernetes
    // scripts/e2e.sh --project kube-api): what the pods and nodes show, plus the driver-neutral API specs.
    // Only where scripts/e2e.sh started that system (it sets E2E_KUBECONFIG).
    ...(process.env.E2E_KUBECONFIG ? [{ name: 'kube-api', testMatch: [/kube\/.*\.spec\.ts/, /api\/jobs\.spec\.ts/] }] : []),
  ],
});
