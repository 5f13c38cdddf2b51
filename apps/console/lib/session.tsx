'use client';

import { createContext, useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { Me } from '@gantry/contracts';
import { makeClient, SESSION_MARKER, type GantryClient } from './api';
import { meKeys } from './queries/me';
import { getApiKey, setApiKey, subscribeStorage } from './storage';

/** Set by the SessionProvider; called by the query cache on any 401. */
let unauthorizedHandler: (() => void) | null = null;
export function notifyUnauthorized() {
  unauthorizedHandler?.();
}

interface Session {
  /** False until the browser's storage has been read (first client render). */
  ready: boolean;
  apiKey: string | null;
  client: GantryClient | null;
  /** Why the last session ended: the console shell turns it into the /login address. */
  endReason: EndReason;
  signIn: (apiKey: string, me: Me) => void;
  signOut: (reason?: 'expired') => void;
}

export type EndReason = 'signed-out' | 'expired' | null;

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: React.ReactNode }) {
  const queryClient = useQueryClient();
  const apiKey = useSyncExternalStore(subscribeStorage, getApiKey, () => null);
  const [ready, setReady] = useState(false);
  const [endReason, setEndReason] = useState<EndReason>(null);
  useEffect(() => setReady(true), []);

  const client = useMemo(() => (apiKey ? makeClient(apiKey) : null), [apiKey]);

  const signIn = useCallback(
    (key: string, me: Me) => {
      queryClient.clear();
      setEndReason(null);
      setApiKey(key);
      queryClient.setQueryData(meKeys.all, me);
    },
    [queryClient],
  );

  const signOut = useCallback(
    (reason?: 'expired') => {
      // A password session also ends on the server (the cookie is revoked there).
      if (getApiKey() === SESSION_MARKER && reason !== 'expired')
        void makeClient(SESSION_MARKER)
          .auth.logout()
          .catch(() => undefined);
      // the console shell sees the key gone and navigates to /login
      setEndReason(reason ?? 'signed-out');
      setApiKey(null);
      queryClient.clear();
    },
    [queryClient],
  );

  useEffect(() => {
    unauthorizedHandler = () => {
      if (getApiKey() !== null) signOut('expired');
    };
    return () => {
      unauthorizedHandler = null;
    };
  }, [signOut]);

  const value = useMemo(() => ({ ready, apiKey, client, endReason, signIn, signOut }), [ready, apiKey, client, endReason, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

/** The API client of the signed-in user; only usable below the console shell. */
export function useClient(): GantryClient {
  const { client } = useSession();
  if (!client) throw new Error('useClient without a signed-in user');
  return client;
}
