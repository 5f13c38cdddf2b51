'use client';

import { useEffect, useState } from 'react';
import { useRouter } from 'next/navigation';
import { describeError, isApiError, makeClient, SESSION_MARKER } from '@/lib/api';
import { useSession } from '@/lib/session';
import { Logo } from '@/components/logo';

function safeNext(raw: string | null): string {
  // only same-origin paths, never a protocol-relative or absolute URL
  return raw && raw.startsWith('/') && !raw.startsWith('//') && !raw.startsWith('/login') ? raw : '/';
}

export default function LoginPage() {
  const router = useRouter();
  const { ready, apiKey, signIn } = useSession();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    if (params.get('reason') === 'expired') setNotice('Your API key was rejected by the API (401). Sign in again.');
  }, []);

  useEffect(() => {
    if (ready && apiKey) router.replace(safeNext(new URLSearchParams(window.location.search).get('next')));
  }, [ready, apiKey, router]);

  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [pwError, setPwError] = useState<string | null>(null);
  // Shown once the API says the email and password open accounts in several tenants.
  const [needTenant, setNeedTenant] = useState(false);
  const [tenant, setTenant] = useState('');

  async function onPasswordSubmit(e: React.FormEvent) {
    e.preventDefault();
    setNotice(null);
    if (!email.trim() || !password) {
      setPwError('Enter your email and password.');
      return;
    }
    setBusy(true);
    setPwError(null);
    try {
      const client = makeClient(SESSION_MARKER);
      await client.auth.login({ email: email.trim(), password, ...(tenant.trim() ? { tenant: tenant.trim().toLowerCase() } : {}) });
      const me = await client.me();
      signIn(SESSION_MARKER, me);
    } catch (err) {
      if (isApiError(err) && err.status === 400 && err.details?.some((d) => d.field === 'tenant')) {
        setNeedTenant(true);
        setPwError(tenant.trim() ? describeError(err) : 'This email and password open accounts in more than one tenant: enter the tenant to sign in to.');
      } else if (isApiError(err) && err.status === 401) setPwError('Wrong email or password.');
      else if (isApiError(err) && err.status === 429) setPwError(`Too many attempts: ${err.message}`);
      else setPwError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  async function onSubmit(e: React.FormEvent) {
    e.preventDefault();
    const trimmed = key.trim();
    setNotice(null);
    if (!trimmed) {
      setError('Paste an API key (it starts with gk_).');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      // The key is sent once and exchanged for an httpOnly session cookie: the browser never keeps it.
      const me = await makeClient(trimmed).me();
      await makeClient(trimmed).auth.keySession();
      signIn(SESSION_MARKER, me);
      // the effect above navigates once the session is marked
    } catch (err) {
      if (isApiError(err) && err.status === 401) {
        setError(`This API key was not accepted (401 ${err.code}): ${err.message}`);
      } else if (isApiError(err) && err.status === 403) {
        setError(`This API key may not read its own identity (403): ${err.message}`);
      } else {
        setError(describeError(err));
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="login">
      <div className="login-card">
        <div className="login-brand">
          <Logo />
          <div>
            <div className="login-title">Gantry</div>
            <div className="login-sub">GPU orchestration console</div>
          </div>
        </div>
        <form className="login-form" onSubmit={(e) => void onPasswordSubmit(e)} noValidate data-testid="login-password-form">
          <label className="field">
            <span className="field-label">Email</span>
            <input
              data-testid="login-email"
              type="email"
              name="email"
              autoComplete="username"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              autoFocus
              aria-invalid={!!pwError}
            />
          </label>
          <label className="field">
            <span className="field-label">Password</span>
            <input
              data-testid="login-password"
              type="password"
              name="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-invalid={!!pwError}
            />
          </label>
          {needTenant && (
            <label className="field">
              <span className="field-label">Tenant (its short name, e.g. acme)</span>
              <input
                data-testid="login-tenant"
                type="text"
                name="tenant"
                autoComplete="organization"
                spellCheck={false}
                value={tenant}
                onChange={(e) => setTenant(e.target.value)}
              />
            </label>
          )}
          {pwError && (
            <div className="alert alert-error" role="alert" data-testid="login-password-error">
              {pwError}
            </div>
          )}
          <button className="btn btn-primary btn-block" type="submit" data-testid="login-password-submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <div className="login-or">
          <span>or with an API key</span>
        </div>
        <form className="login-form" onSubmit={(e) => void onSubmit(e)} noValidate>
          <label className="field">
            <span className="field-label">API key</span>
            <input
              data-testid="login-api-key"
              type="password"
              name="apiKey"
              autoComplete="off"
              spellCheck={false}
              placeholder="gk_..."
              value={key}
              onChange={(e) => setKey(e.target.value)}
              aria-invalid={!!error}
            />
          </label>
          {notice && !error && <div className="alert alert-warn">{notice}</div>}
          {error && (
            <div className="alert alert-error" role="alert" data-testid="login-error">
              {error}
            </div>
          )}
          <button className="btn btn-block" type="submit" data-testid="login-submit" disabled={busy}>
            {busy ? 'Checking…' : 'Sign in with the key'}
          </button>
          <p className="login-hint">
            Either way the console keeps only an httpOnly session cookie: a key is checked against <code>/v1/me</code>, exchanged for a session, and never
            stored in this browser. Revoking the key ends the session.
          </p>
        </form>
      </div>
    </main>
  );
}
