/**
 * Browser-side persistence of the sign-in marker and the selected team. The marker says a
 * session cookie (httpOnly, invisible to scripts) is held; no API key or secret is ever stored
 * here. Both live in localStorage; a tiny subscription lets React re-render on change
 * (including changes made in another tab).
 */
export const API_KEY_STORAGE = 'gantry.apiKey';
export const TEAM_STORAGE = 'gantry.teamId';

type Listener = () => void;
const listeners = new Set<Listener>();

function emit() {
  for (const l of listeners) l();
}

export function subscribeStorage(listener: Listener): () => void {
  listeners.add(listener);
  const onStorage = (e: StorageEvent) => {
    if (e.key === API_KEY_STORAGE || e.key === TEAM_STORAGE || e.key === null) listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

function read(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string | null) {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // storage disabled: the session lasts as long as the page
  }
  emit();
}

/** The sign-in marker; a secret left by an older console (an API key) is dropped, never used. */
export const getApiKey = () => {
  const v = read(API_KEY_STORAGE);
  return v === null || v === 'session' ? v : null;
};
export const setApiKey = (key: string | null) => write(API_KEY_STORAGE, key);

/** '' means "all teams". null means nothing chosen yet. */
export const getStoredTeam = () => read(TEAM_STORAGE);
export const setStoredTeam = (teamId: string) => write(TEAM_STORAGE, teamId);
export const clearStoredTeam = () => write(TEAM_STORAGE, null);
