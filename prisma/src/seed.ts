/**
 * Demo seed: a tenant with two teams, a team admin and a member, API keys written to
 * .gantry/demo-keys.json at the repo root (and printed). Idempotent: a second run keeps the
 * existing rows and keys. The simulated cluster is loaded by the worker at start.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createPrismaClient } from './index';
import { createApiKey, createTeam, createTenant, createUser } from './seed-factories';

/** Demo console users' passwords (development only; printed like the keys). */
const DEMO_PASSWORDS = {
  'tess@acme.example': 'tess-demo-gantry-2026',
  'ada@acme.example': 'ada-demo-gantry-2026',
  'max@acme.example': 'max-demo-gantry-2026',
} as const;

const ALL_TEAM_SCOPES = ['jobs:read', 'jobs:write', 'endpoints:read', 'endpoints:write', 'quotas:read', 'cluster:read'];

async function main() {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  const root = process.env.GANTRY_ROOT ?? join(__dirname, '..', '..');
  const keysFile = join(root, '.gantry', 'demo-keys.json');
  const db = createPrismaClient(url, { max: 2 });
  try {
    // Capacity is granted, never open: each demo tenant gets a GPU total, each team a quota.
    const acme = await createTenant(db, { name: 'Acme AI', slug: 'acme', gpuTotal: 256 });
    const research = await createTeam(db, acme.id, {
      name: 'Research',
      slug: 'research',
      quota: { guaranteed: 160, limit: 192 },
    });
    const inference = await createTeam(db, acme.id, {
      name: 'Inference',
      slug: 'inference',
      quota: { guaranteed: 32, limit: 64 },
    });
    const admin = await createUser(db, {
      email: 'ada@acme.example',
      name: 'Ada (team admin)',
      role: 'team_admin',
      tenantId: acme.id,
      teamId: research.id,
      password: DEMO_PASSWORDS['ada@acme.example'],
    });
    const member = await createUser(db, {
      email: 'max@acme.example',
      name: 'Max (member)',
      role: 'member',
      tenantId: acme.id,
      teamId: research.id,
      password: DEMO_PASSWORDS['max@acme.example'],
    });
    await createUser(db, {
      email: 'tess@acme.example',
      name: 'Tess (tenant admin)',
      role: 'tenant_admin',
      tenantId: acme.id,
      password: DEMO_PASSWORDS['tess@acme.example'],
    });
    const users = [
      { who: 'Tess (tenant admin), Acme AI', email: 'tess@acme.example', password: DEMO_PASSWORDS['tess@acme.example'] },
      { who: 'Ada (team admin), team Research', email: 'ada@acme.example', password: DEMO_PASSWORDS['ada@acme.example'] },
      { who: 'Max (member), team Research', email: 'max@acme.example', password: DEMO_PASSWORDS['max@acme.example'] },
    ];
    const printUsers = () => {
      console.log('Demo console users (email / password):');
      for (const u of users) console.log(`  ${u.who.padEnd(48)} ${u.email} / ${u.password}`);
    };
    const globex = await createTenant(db, { name: 'Globex Labs', slug: 'globex', gpuTotal: 64 });
    const vision = await createTeam(db, globex.id, { name: 'Vision', slug: 'vision', quota: { guaranteed: 16, limit: 32 } });

    if (existsSync(keysFile)) {
      const known = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: { id: string }[] };
      const ids = known.keys.map((k) => k.id);
      if ((await db.apiKey.count({ where: { id: { in: ids }, revokedAt: null } })) === ids.length) {
        console.log(`demo already seeded; keys in ${keysFile}`);
        printUsers();
        return;
      }
    }
    const keys = [
      {
        who: 'tenant admin, Acme AI',
        ...(await createApiKey(db, {
          name: 'demo tenant admin',
          role: 'tenant_admin',
          tenantId: acme.id,
          scopes: [...ALL_TEAM_SCOPES, 'quotas:write'],
        })),
      },
      {
        who: `${admin.name}, team Research`,
        ...(await createApiKey(db, {
          name: 'demo research team admin',
          role: 'team_admin',
          tenantId: acme.id,
          teamId: research.id,
          userId: admin.id,
          scopes: [...ALL_TEAM_SCOPES, 'quotas:write'],
        })),
      },
      {
        who: `${member.name}, team Research`,
        ...(await createApiKey(db, {
          name: 'demo research member',
          role: 'member',
          tenantId: acme.id,
          teamId: research.id,
          userId: member.id,
          scopes: ALL_TEAM_SCOPES,
        })),
      },
      {
        who: 'member, team Inference',
        ...(await createApiKey(db, {
          name: 'demo inference member',
          role: 'member',
          tenantId: acme.id,
          teamId: inference.id,
          scopes: ALL_TEAM_SCOPES,
        })),
      },
      {
        who: 'member, Globex Labs / Vision (another tenant)',
        ...(await createApiKey(db, {
          name: 'demo globex member',
          role: 'member',
          tenantId: globex.id,
          teamId: vision.id,
          scopes: ALL_TEAM_SCOPES,
        })),
      },
    ];
    mkdirSync(join(root, '.gantry'), { recursive: true });
    writeFileSync(keysFile, JSON.stringify({ tenants: { acme: acme.id, globex: globex.id }, keys, users }, null, 2) + '\n', { mode: 0o600 });
    console.log(`Demo API keys (also in ${keysFile}):`);
    for (const k of keys) console.log(`  ${k.who.padEnd(48)} ${k.key}`);
    printUsers();
  } finally {
    await db.$disconnect();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
