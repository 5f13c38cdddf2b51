const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { Redis } = require('ioredis');

module.exports = async () => {
  const prismaDir = path.join(__dirname, '..', '..', '..', 'prisma');
  execFileSync('node', ['scripts/database.cjs', 'drop'], { cwd: prismaDir, env: process.env, stdio: 'inherit' });
  // Remove this run's queue keys.
  const redis = new Redis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', { lazyConnect: true });
  await redis.connect();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${process.env.GANTRY_QUEUE_PREFIX}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
};
