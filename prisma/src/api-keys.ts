import { createHash, randomBytes } from 'node:crypto';

/** API keys look like `gk_<prefix>_<secret>`; only the sha256 of the whole key is stored. */
export interface NewApiKey {
  key: string;
  prefix: string;
  hash: string;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i]! % ALPHABET.length];
  return out;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function newApiKey(): NewApiKey {
  const prefix = randomToken(10);
  const key = `gk_${prefix}_${randomToken(32)}`;
  return { key, prefix, hash: hashApiKey(key) };
}

/** The visible prefix of a key, or null when it is not shaped like a Gantry key. */
export function apiKeyPrefix(key: string): string | null {
  const m = /^gk_([a-z0-9]{4,32})_[A-Za-z0-9]{16,128}$/.exec(key);
  return m ? m[1]! : null;
}
