import { GPU_MODEL_SPECS, UNKNOWN_GPU_MODEL } from '@gantry/contracts';
import { z } from 'zod';
import { parseCidr } from './client-address';

/** Environment parsed once at boot; a bad variable fails fast with its name. */
const ZEnv = z.object({
  GANTRY_MODE: z.enum(['http', 'worker']).default('http'),
  PORT: z.coerce.number().int().min(1).max(65535).default(4000),
  DATABASE_URL: z.string().url().default('postgresql://postgres@127.0.0.1:5432/gantry'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  /** Postgres connections of this process (each API and worker process has its own pool). */
  GANTRY_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  GANTRY_DB_READ_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(3),
  GANTRY_DB_TX_MAX_WAIT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  GANTRY_DRIVER: z.enum(['simulated', 'kubernetes', 'remote']).default('simulated'),
  /** Cluster host of GANTRY_DRIVER=remote (a simulated cluster served by its own process). */
  GANTRY_DRIVER_URL: z.string().url().optional(),
  GANTRY_SIM_CLUSTER: z.string().optional(),
  GANTRY_SIM_SPEED: z.coerce.number().positive().max(10_000).default(1),
  GANTRY_KUBECONFIG: z.string().optional(),
  /**
   * The kube-emulator's control API (packages/kube-emulator) when GANTRY_DRIVER=kubernetes runs on
   * an emulated GPU cluster: `POST /v1/sim/faults` injects through it, and incidents reset GPUs
   * and reboot nodes through it (the emulator plays the hardware and its BMC).
   */
  /** dcgm-exporter's /metrics (or a Prometheus federation of every node's) for GPU telemetry with GANTRY_DRIVER=kubernetes. */
  GANTRY_KUBE_DCGM_URL: z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional()),
  GANTRY_KUBE_EMULATOR_URL: z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional()),
  /** Bare metal on Kubernetes (docs/bare-metal.md): the provisioning hook, a command run with `sh -c` and/or a webhook URL. */
  GANTRY_BARE_METAL_HOOK: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  GANTRY_BARE_METAL_WEBHOOK: z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional()),
  GANTRY_BOOTSTRAP_ADMIN_KEY: z
    .string()
    .regex(/^gk_[a-z0-9]{4,32}_[A-Za-z0-9]{16,128}$/, 'must look like gk_<prefix>_<secret>')
    .optional(),
  /** Prefix of every BullMQ key, so that several systems (or test runs) can share one Redis. */
  GANTRY_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]+$/)
    .default('gantry'),
  /** Seconds between safety-net scheduling cycles and reconciliations. */
  GANTRY_RECONCILE_SECONDS: z.coerce.number().positive().max(3600).default(5),
  /** Jobs one scheduling cycle places at most (the rest wait for the next cycle, asked for at once); 0 = no bound. */
  GANTRY_CYCLE_MAX_PLACEMENTS: z.coerce.number().int().min(0).max(1_000_000).default(512),
  /**
   * Seconds a placed job may stay `starting` before the reconciler sends its start again (its
   * start message may be lost with Redis). Younger starts are still queued, not lost: sending
   * them again would only read and start them twice. At a worker's boot every start is sent again.
   */
  GANTRY_START_GRACE_SECONDS: z.coerce.number().min(0).max(3600).default(30),
  /** Seconds between the worker's invariant checks over the database (0 = off); see docs/reliability.md. */
  GANTRY_INTEGRITY_CHECK_SECONDS: z.coerce.number().min(0).max(86_400).default(60),
  /** Seconds a stopping worker gives its active jobs before it closes without them. */
  GANTRY_SHUTDOWN_GRACE_SECONDS: z.coerce.number().min(0).max(600).default(10),
  GANTRY_LOG_LEVEL: z.enum(['error', 'warn', 'log', 'debug']).default('log'),
  /**
   * CPU priority a worker process lowers itself to at boot (Unix niceness, 0-19; 0 leaves it). On
   * a host it shares with the API, the API's answers come first and the workers' placements,
   * starts and periodic loops take the CPU left; on a host of its own it changes nothing.
   */
  GANTRY_WORKER_NICE: z.coerce.number().int().min(0).max(19).default(5),
  /**
   * How far V8 lets the heap of a process grow past what a full garbage collection left live before
   * it collects again, in percent (0 = V8's own policy, which on a host with 16 GiB or more lets it
   * reach about four times the live heap). Unset: 50 for the API (its garbage is request-scoped and
   * dies young), 100 for a worker (at 50 its collections cost a fifth more CPU under load). A
   * long-running process allocates far more than it keeps: at 10,000 nodes a worker keeps about
   * 150 MB and V8's own policy let it reach 650 MB-1.1 GB resident (docs/operations.md#memory,
   * docs/benchmarks-load.md round 19). Not a ceiling: the heap still grows with what it keeps.
   */
  GANTRY_HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(400).optional(),
  /** Requests per minute per API key or session (429 with Retry-After beyond). */
  GANTRY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(1200),
  /** Console sessions: lifetime in hours; `Secure` cookies (true, or implied by an https GANTRY_PUBLIC_URL). */
  GANTRY_SESSION_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(12),
  GANTRY_COOKIE_SECURE: z.enum(['true', 'false']).default('false'),
  /** Live API keys one owner (a user, or a chain of keys) may hold at once. */
  GANTRY_MAX_KEYS_PER_OWNER: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Failed sign-ins per minute per account (then even the right password waits for the next minute). */
  GANTRY_LOGIN_ATTEMPTS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(10),
  /** Sign-in attempts per minute per client address (many users may share one address behind NAT). */
  GANTRY_LOGIN_ADDRESS_ATTEMPTS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  /**
   * Proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDR ranges, e.g.
   * the console's server); from anyone else the header is ignored.
   */
  GANTRY_TRUSTED_PROXIES: z
    .string()
    .default('')
    .refine((v) => v.split(',').every((p) => !p.trim() || parseCidr(p.trim()) !== null), 'must be comma-separated IP addresses or CIDR ranges'),
  /**
   * The address people reach Gantry at (the console, which forwards /v1 to the API), e.g.
   * `https://gantry.example.com`. https: session cookies are `Secure` and answers carry HSTS.
   */
  GANTRY_PUBLIC_URL: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .url()
      .regex(/^https?:\/\//i, 'must be an http:// or https:// URL')
      .optional(),
  ),
  /** Telemetry: seconds between driver metric samples, retention, idle detection, prices. */
  GANTRY_TELEMETRY_SECONDS: z.coerce.number().positive().max(3600).default(15),
  GANTRY_TELEMETRY_RAW_RETENTION_MINUTES: z.coerce.number().positive().default(60),
  GANTRY_TELEMETRY_MINUTE_RETENTION_HOURS: z.coerce.number().positive().default(48),
  GANTRY_TELEMETRY_HOUR_RETENTION_DAYS: z.coerce.number().positive().default(400),
  GANTRY_IDLE_SM_PCT: z.coerce.number().min(0).max(100).default(5),
  GANTRY_IDLE_MINUTES: z.coerce.number().min(0).default(10),
  /** JSON: { "<gpuModel>": { "pricePerGpuHour": 2.5, "idleW": 70, "busyW": 700 } } over the defaults. */
  GANTRY_GPU_PRICES: z.string().optional(),
  GANTRY_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .default('USD'),
  /**
   * Bearer token a Prometheus scraper sends to /metrics (besides platform admins' API keys);
   * unset: only platform-admin keys may scrape. Compared in constant time.
   */
  GANTRY_METRICS_TOKEN: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .min(16, 'must be at least 16 characters')
      .max(512)
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      .optional(),
  ),
  /** true: /metrics labels series with tenant and team slugs too (default: opaque tenant_id and team_id only). */
  GANTRY_METRICS_TENANT_LABELS: z.enum(['true', 'false']).default('false'),
  /**
   * Fair share over time (Slurm's PriorityDecayHalfLife): half-life of a team's past GPU usage,
   * in simulated seconds (wall-clock seconds on a real cluster); and w, how much that decayed
   * usage weighs against what the team holds now: GPUs counted = (1 - w) x held + w x decayed
   * average (0: current holdings only; 1: decayed usage only, as Slurm).
   */
  GANTRY_FAIR_SHARE_HALF_LIFE_SECONDS: z.coerce
    .number()
    .min(60)
    .max(365 * 86_400)
    .default(86_400),
  GANTRY_FAIR_SHARE_HISTORY_WEIGHT: z.coerce.number().min(0).max(1).default(0.5),
  /**
   * Demo history (docs/demo.md): `true` makes the worker replay a synthetic week of work on the
   * simulated cluster at its first start, so that the 24 h and 7 d charts have a past. Off unless
   * asked (`npm run dev` asks); `GANTRY_DEMO_HISTORY_DAYS` is the length of that past.
   */
  GANTRY_DEMO_HISTORY: z.enum(['true', 'false']).default('false'),
  GANTRY_DEMO_HISTORY_DAYS: z.coerce.number().int().min(1).max(14).default(7),
  /**
   * Power management (docs/power.md): `true` lets the node manager power empty nodes down and
   * boot them for queued demand. The idle time is in simulated seconds (wall-clock seconds on a
   * real cluster); the headroom is the share of all GPUs kept free on powered nodes.
   */
  GANTRY_POWER_MANAGEMENT: z.enum(['true', 'false']).default('false'),
  GANTRY_POWER_IDLE_SECONDS: z.coerce
    .number()
    .min(0)
    .max(30 * 86_400)
    .default(1800),
  GANTRY_POWER_HEADROOM: z.coerce.number().min(0).max(1).default(0.1),
  /** The power hook of the Kubernetes driver: a shell command run as `sh -c "<command>" gantry-power <on|off> <node>`, or a webhook URL. */
  GANTRY_POWER_COMMAND: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  GANTRY_POWER_WEBHOOK_URL: z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional()),
  /**
   * Reservations (docs/reservations.md): how far ahead (wall-clock seconds) a window's GPUs are
   * kept from work that could not leave them by its start (non-preemptible work whose declared
   * run would end after it), and how often the worker looks for windows that open or close.
   */
  GANTRY_RESERVATION_LOOKAHEAD_SECONDS: z.coerce
    .number()
    .min(0)
    .max(30 * 86_400)
    .default(86_400),
  GANTRY_RESERVATION_TICK_SECONDS: z.coerce.number().min(0.2).max(300).default(2),
  /**
   * Burn-in (docs/reference/gpu.md section 3, burn-in): after a GPU reset or node reboot, a diagnostic under load (DCGM
   * `dcgmi diag -r <level>`) of this many seconds (simulated seconds on the simulated cluster)
   * runs on the repaired hardware before it goes back into service; after MAX_FAILURES failed
   * burn-ins it stays quarantined and the incident needs a person. `false` uncordons on the idle
   * health check alone. IMAGE and COMMAND (a JSON array) replace the diagnostic on Kubernetes.
   */
  GANTRY_BURN_IN: z.enum(['true', 'false']).default('true'),
  GANTRY_BURN_IN_SECONDS: z.coerce.number().min(1).max(86_400).default(300),
  GANTRY_BURN_IN_LEVEL: z.coerce.number().int().min(1).max(4).default(2),
  GANTRY_BURN_IN_MAX_FAILURES: z.coerce.number().int().min(1).max(10).default(2),
  GANTRY_BURN_IN_IMAGE: z.preprocess((v) => (v === '' ? undefined : v), z.string().max(300).optional()),
  GANTRY_BURN_IN_COMMAND: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .refine((v) => {
        try {
          const a: unknown = JSON.parse(v);
          return Array.isArray(a) && a.length > 0 && a.every((x) => typeof x === 'string');
        } catch {
          return false;
        }
      }, 'must be a JSON array of strings, e.g. ["dcgmi","diag","-r","3"]')
      .optional(),
  ),
});

export type Env = z.infer<typeof ZEnv>;

export interface AppConfig {
  mode: 'http' | 'worker';
  port: number;
  databaseUrl: string;
  dbPoolSize: number;
  /** Connections of the API's reads (GET, HEAD), apart from those of its writes. */
  dbReadPoolSize: number;
  /** How long a transaction may wait for a pooled connection before it fails. */
  dbTxMaxWaitMs: number;
  redis: { host: string; port: number; password?: string; db: number };
  queuePrefix: string;
  driver: {
    kind: 'simulated' | 'kubernetes' | 'remote';
    /** True when the cluster is simulated (embedded or served by a cluster host): faults and traffic can be injected. */
    simulated: boolean;
    /** Faults can be injected: a simulated cluster, or Kubernetes on the kube-emulator (GANTRY_KUBE_EMULATOR_URL). */
    faultInjection: boolean;
    /** The kube-emulator's control API, with GANTRY_DRIVER=kubernetes on an emulated cluster. */
    kubeEmulatorUrl?: string;
    /** dcgm-exporter metrics for the Kubernetes driver's telemetry (GANTRY_KUBE_DCGM_URL). */
    kubeDcgmMetricsUrl?: string;
    simCluster?: string;
    simSpeed: number;
    kubeconfig?: string;
    remoteUrl?: string;
    /** Power hook of the Kubernetes driver (GANTRY_POWER_COMMAND / GANTRY_POWER_WEBHOOK_URL). */
    powerHook: { command?: string; webhookUrl?: string };
    /** Bare-metal provisioning hook of the Kubernetes driver (GANTRY_BARE_METAL_HOOK / GANTRY_BARE_METAL_WEBHOOK). */
    bareMetalHook?: { command?: string; url?: string };
  };
  /** Power management: on/off, idle time before a node powers down (simulated seconds), headroom (share of GPUs). */
  power: { enabled: boolean; idleSeconds: number; headroom: number };
  bootstrapAdminKey?: string;
  reconcileSeconds: number;
  /** GANTRY_CYCLE_MAX_PLACEMENTS (0 = no bound). */
  cycleMaxPlacements: number;
  /** GANTRY_START_GRACE_SECONDS, in milliseconds. */
  startGraceMs: number;
  /** Fair share over time: half-life (simulated seconds) and weight of decayed past usage. */
  fairShare: { halfLifeSeconds: number; historyWeight: number };
  /** Demo history: replay a synthetic past of `days` days at the worker's first start (simulated cluster only). */
  demoHistory: { enabled: boolean; days: number };
  /** Reservations: look-ahead before a window and the worker's tick (seconds). */
  reservations: { lookaheadSeconds: number; tickSeconds: number };
  integrityCheckSeconds: number;
  shutdownGraceSeconds: number;
  logLevel: Env['GANTRY_LOG_LEVEL'];
  /** GANTRY_WORKER_NICE: the niceness a worker process sets for itself at boot. */
  workerNice: number;
  /** GANTRY_HEAP_GROWTH_PERCENT: V8's heap growth past the live heap (0: V8's own policy; unset: 50 for the API, 100 for a worker). */
  heapGrowthPercent: number;
  /** GANTRY_PUBLIC_URL, when set. */
  publicUrl?: string;
  /** `Strict-Transport-Security` on every answer: only when the public URL is https. */
  hsts: boolean;
  auth: {
    rateLimitPerMinute: number;
    sessionHours: number;
    cookieSecure: boolean;
    maxLiveKeysPerOwner: number;
    loginAttemptsPerMinute: number;
    loginAddressAttemptsPerMinute: number;
    trustedProxies: string[];
  };
  telemetry: TelemetryConfig;
  /** /metrics: the scrape token (unset: platform-admin keys only) and whether labels may name tenants and teams. */
  metrics: { token?: string; tenantLabels: boolean };
  burnIn: BurnInConfig;
}

/** Burn-in under load before repaired hardware goes back into service (GANTRY_BURN_IN_*). */
export interface BurnInConfig {
  enabled: boolean;
  /** Length of the diagnostic (simulated seconds on the simulated cluster). */
  seconds: number;
  /** DCGM diagnostic level (`dcgmi diag -r <level>`, 1 quick .. 4 extended). */
  level: number;
  /** Failed burn-ins after which the hardware stays quarantined and the incident needs a person. */
  maxFailures: number;
  /** Kubernetes: the diagnostic's image and command (defaults: DCGM's image, `dcgmi diag`). */
  image?: string;
  command?: string[];
}

export interface TelemetryConfig {
  intervalSeconds: number;
  rawRetentionMinutes: number;
  minuteRetentionHours: number;
  hourRetentionDays: number;
  idleSmPct: number;
  idleMinutes: number;
  currency: string;
  /** Per GPU model: GPU-hour price and the idle / busy watts of the energy estimate. */
  prices: Record<string, { pricePerGpuHour: number; idleW: number; busyW: number }>;
}

/**
 * Chargeback defaults per GPU model, from the GPU catalog (list prices of a GPU cloud; watts: idle
 * and TDP of the SXM parts); `*` is any other model.
 */
export const DEFAULT_GPU_PRICES: TelemetryConfig['prices'] = {
  ...Object.fromEntries(Object.values(GPU_MODEL_SPECS).map(({ model, pricePerGpuHour, idleW, busyW }) => [model, { pricePerGpuHour, idleW, busyW }])),
  '*': { pricePerGpuHour: UNKNOWN_GPU_MODEL.pricePerGpuHour, idleW: UNKNOWN_GPU_MODEL.idleW, busyW: UNKNOWN_GPU_MODEL.busyW },
};

const ZPrices = z.record(z.string(), z.object({ pricePerGpuHour: z.number().min(0), idleW: z.number().min(0), busyW: z.number().min(0) }));

export function parseConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const r = new URL(e.REDIS_URL);
  const https = /^https:\/\//i.test(e.GANTRY_PUBLIC_URL ?? '');
  return {
    mode: e.GANTRY_MODE,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dbPoolSize: e.GANTRY_DB_POOL_SIZE,
    dbReadPoolSize: e.GANTRY_DB_READ_POOL_SIZE,
    dbTxMaxWaitMs: e.GANTRY_DB_TX_MAX_WAIT_MS,
    redis: {
      host: r.hostname,
      port: Number(r.port || 6379),
      password: r.password ? decodeURIComponent(r.password) : undefined,
      db: Number(r.pathname.replace('/', '') || 0),
    },
    queuePrefix: e.GANTRY_QUEUE_PREFIX,
    driver: {
      kind: e.GANTRY_DRIVER,
      simulated: e.GANTRY_DRIVER !== 'kubernetes',
      faultInjection: e.GANTRY_DRIVER !== 'kubernetes' || !!e.GANTRY_KUBE_EMULATOR_URL,
      kubeEmulatorUrl: e.GANTRY_DRIVER === 'kubernetes' ? e.GANTRY_KUBE_EMULATOR_URL : undefined,
      kubeDcgmMetricsUrl: e.GANTRY_KUBE_DCGM_URL,
      remoteUrl: e.GANTRY_DRIVER_URL,
      simCluster: e.GANTRY_SIM_CLUSTER,
      simSpeed: e.GANTRY_SIM_SPEED,
      kubeconfig: e.GANTRY_KUBECONFIG,
      powerHook: { command: e.GANTRY_POWER_COMMAND, webhookUrl: e.GANTRY_POWER_WEBHOOK_URL },
      bareMetalHook:
        e.GANTRY_BARE_METAL_HOOK || e.GANTRY_BARE_METAL_WEBHOOK ? { command: e.GANTRY_BARE_METAL_HOOK, url: e.GANTRY_BARE_METAL_WEBHOOK } : undefined,
    },
    power: { enabled: e.GANTRY_POWER_MANAGEMENT === 'true', idleSeconds: e.GANTRY_POWER_IDLE_SECONDS, headroom: e.GANTRY_POWER_HEADROOM },
    bootstrapAdminKey: e.GANTRY_BOOTSTRAP_ADMIN_KEY,
    reconcileSeconds: e.GANTRY_RECONCILE_SECONDS,
    cycleMaxPlacements: e.GANTRY_CYCLE_MAX_PLACEMENTS,
    startGraceMs: e.GANTRY_START_GRACE_SECONDS * 1000,
    fairShare: { halfLifeSeconds: e.GANTRY_FAIR_SHARE_HALF_LIFE_SECONDS, historyWeight: e.GANTRY_FAIR_SHARE_HISTORY_WEIGHT },
    demoHistory: { enabled: e.GANTRY_DEMO_HISTORY === 'true', days: e.GANTRY_DEMO_HISTORY_DAYS },
    reservations: { lookaheadSeconds: e.GANTRY_RESERVATION_LOOKAHEAD_SECONDS, tickSeconds: e.GANTRY_RESERVATION_TICK_SECONDS },
    integrityCheckSeconds: e.GANTRY_INTEGRITY_CHECK_SECONDS,
    shutdownGraceSeconds: e.GANTRY_SHUTDOWN_GRACE_SECONDS,
    logLevel: e.GANTRY_LOG_LEVEL,
    workerNice: e.GANTRY_WORKER_NICE,
    heapGrowthPercent: e.GANTRY_HEAP_GROWTH_PERCENT ?? (e.GANTRY_MODE === 'worker' ? 100 : 50),
    publicUrl: e.GANTRY_PUBLIC_URL,
    hsts: https,
    auth: {
      rateLimitPerMinute: e.GANTRY_RATE_LIMIT_PER_MINUTE,
      sessionHours: e.GANTRY_SESSION_HOURS,
      cookieSecure: e.GANTRY_COOKIE_SECURE === 'true' || https,
      maxLiveKeysPerOwner: e.GANTRY_MAX_KEYS_PER_OWNER,
      loginAttemptsPerMinute: e.GANTRY_LOGIN_ATTEMPTS_PER_MINUTE,
      loginAddressAttemptsPerMinute: e.GANTRY_LOGIN_ADDRESS_ATTEMPTS_PER_MINUTE,
      trustedProxies: e.GANTRY_TRUSTED_PROXIES.split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    },
    telemetry: {
      intervalSeconds: e.GANTRY_TELEMETRY_SECONDS,
      rawRetentionMinutes: e.GANTRY_TELEMETRY_RAW_RETENTION_MINUTES,
      minuteRetentionHours: e.GANTRY_TELEMETRY_MINUTE_RETENTION_HOURS,
      hourRetentionDays: e.GANTRY_TELEMETRY_HOUR_RETENTION_DAYS,
      idleSmPct: e.GANTRY_IDLE_SM_PCT,
      idleMinutes: e.GANTRY_IDLE_MINUTES,
      currency: e.GANTRY_CURRENCY,
      prices: { ...DEFAULT_GPU_PRICES, ...parsePrices(e.GANTRY_GPU_PRICES) },
    },
    metrics: { token: e.GANTRY_METRICS_TOKEN, tenantLabels: e.GANTRY_METRICS_TENANT_LABELS === 'true' },
    burnIn: {
      enabled: e.GANTRY_BURN_IN === 'true',
      seconds: e.GANTRY_BURN_IN_SECONDS,
      level: e.GANTRY_BURN_IN_LEVEL,
      maxFailures: e.GANTRY_BURN_IN_MAX_FAILURES,
      image: e.GANTRY_BURN_IN_IMAGE,
      command: e.GANTRY_BURN_IN_COMMAND ? (JSON.parse(e.GANTRY_BURN_IN_COMMAND) as string[]) : undefined,
    },
  };
}

function parsePrices(json: string | undefined): TelemetryConfig['prices'] {
  if (!json) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error('Invalid environment:\n  GANTRY_GPU_PRICES: is not valid JSON');
  }
  const parsed = ZPrices.safeParse(raw);
  if (!parsed.success) throw new Error(`Invalid environment:\n  GANTRY_GPU_PRICES: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
