import { z } from 'zod';

/** Environment parsed once at boot; a bad variable fails fast with its name. */
const ZEnv = z.object({
  GANTRY_MODE: z.enum(['http', 'worker']).default('http'),
  PORT: z.coerce.number().int().min(1).max(65535).default(4000),
  DATABASE_URL: z.string().url().default('postgresql://postgres@127.0.0.1:5432/gantry'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  GANTRY_DRIVER: z.enum(['simulated', 'kubernetes']).default('simulated'),
  GANTRY_SIM_CLUSTER: z.string().optional(),
  GANTRY_SIM_SPEED: z.coerce.number().positive().max(10_000).default(1),
  GANTRY_KUBECONFIG: z.string().optional(),
  GANTRY_BOOTSTRAP_ADMIN_KEY: z
    .string()
    .regex(/^gk_[a-z0-9]{4,32}_[A-Za-z0-9]{16,128}$/, 'must look like gk_<prefix>_<secret>')
    .optional(),
  /** Prefix of every BullMQ key, so that several systems (or test runs) can share one Redis. */
  GANTRY_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9:_-]+$/).default('gantry'),
  /** Seconds between safety-net scheduling cycles and reconciliations. */
  GANTRY_RECONCILE_SECONDS: z.coerce.number().positive().max(3600).default(5),
  GANTRY_LOG_LEVEL: z.enum(['error', 'warn', 'log', 'debug']).default('log'),
});

export type Env = z.infer<typeof ZEnv>;

export interface AppConfig {
  mode: 'http' | 'worker';
  port: number;
  databaseUrl: string;
  redis: { host: string; port: number; password?: string; db: number };
  queuePrefix: string;
  driver: { kind: 'simulated' | 'kubernetes'; simCluster?: string; simSpeed: number; kubeconfig?: string };
  bootstrapAdminKey?: string;
  reconcileSeconds: number;
  logLevel: Env['GANTRY_LOG_LEVEL'];
}

export function parseConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = ZEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const r = new URL(e.REDIS_URL);
  return {
    mode: e.GANTRY_MODE,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    redis: {
      host: r.hostname,
      port: Number(r.port || 6379),
      password: r.password ? decodeURIComponent(r.password) : undefined,
      db: Number(r.pathname.replace('/', '') || 0),
    },
    queuePrefix: e.GANTRY_QUEUE_PREFIX,
    driver: {
      kind: e.GANTRY_DRIVER,
      simCluster: e.GANTRY_SIM_CLUSTER,
      simSpeed: e.GANTRY_SIM_SPEED,
      kubeconfig: e.GANTRY_KUBECONFIG,
    },
    bootstrapAdminKey: e.GANTRY_BOOTSTRAP_ADMIN_KEY,
    reconcileSeconds: e.GANTRY_RECONCILE_SECONDS,
    logLevel: e.GANTRY_LOG_LEVEL,
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');
