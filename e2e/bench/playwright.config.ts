import { defineConfig } from '@playwright/test';
import base from '../playwright.config';

/** The heatmap benchmark only (run by run.sh, not by the e2e suite). */
export default defineConfig({
  ...base,
  testDir: '.',
  timeout: 600_000,
  reporter: [['list']],
  outputDir: '../test-results/bench-heatmap',
  projects: [{ name: 'bench', testMatch: /heatmap\.bench\.ts/ }],
});
