'use client';

import { useEffect, useRef, useState } from 'react';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import type { Me } from '@gantry/contracts';
import { useSession } from '@/lib/session';
import { Logo } from './logo';
import { TeamSwitcher } from './team-switcher';

/** Pages of the console. Endpoints, Quotas, API keys, Incidents and Audit join this list when built. */
const NAV = [
  { href: '/', label: 'Overview', testId: 'nav-overview', icon: IconOverview },
  { href: '/jobs', label: 'Jobs', testId: 'nav-jobs', icon: IconJobs },
  { href: '/endpoints', label: 'Endpoints', testId: 'nav-endpoints', icon: IconEndpoints },
  { href: '/bare-metal', label: 'Bare metal', testId: 'nav-bare-metal', icon: IconBareMetal },
  { href: '/cluster', label: 'Cluster', testId: 'nav-cluster', icon: IconCluster },
  { href: '/heatmap', label: 'GPU heatmap', testId: 'nav-heatmap', icon: IconHeatmap },
  { href: '/utilization', label: 'Utilization', testId: 'nav-utilization', icon: IconUtilization },
  { href: '/incidents', label: 'Incidents', testId: 'nav-incidents', icon: IconIncidents },
  { href: '/fairness', label: 'Fairness', testId: 'nav-fairness', icon: IconFairness },
] as const;

/** Administration pages: quotas with usage, API keys, audit log, the what-if planner. */
const ADMIN_NAV = [
  { href: '/quotas', label: 'Quotas', testId: 'nav-quotas', icon: IconQuotas },
  { href: '/reservations', label: 'Reservations', testId: 'nav-reservations', icon: IconReservations },
  { href: '/api-keys', label: 'API keys', testId: 'nav-api-keys', icon: IconKeys },
  { href: '/audit', label: 'Audit log', testId: 'nav-audit', icon: IconAudit },
  { href: '/planner', label: 'Planner', testId: 'nav-planner', icon: IconPlanner },
] as const;

/** Pages for operators and tenant admins only. */
const ADMINS_ONLY = new Set<string>(['/audit', '/planner']);

/**
 * The navigation. On a wide screen a fixed column; below 900 px a top bar with a menu button
 * that opens the same column over the page (closed again by a link, Escape or the backdrop).
 */
export function Sidebar({ me }: { me: Me | undefined }) {
  const pathname = usePathname();
  const { signOut } = useSession();
  const [open, setOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const isActive = (href: string) => (href === '/' ? pathname === '/' : pathname === href || pathname.startsWith(`${href}/`));

  // a new page closes the menu
  useEffect(() => setOpen(false), [pathname]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      menuButton.current?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);

  return (
    <>
      <header className="topbar">
        <button
          ref={menuButton}
          type="button"
          className="menu-button"
          data-testid="nav-menu"
          aria-label={open ? 'Close the menu' : 'Open the menu'}
          aria-expanded={open}
          aria-controls="main-nav"
          onClick={() => setOpen(!open)}
        >
          <IconMenu open={open} />
        </button>
        <Logo size={22} />
        <span className="topbar-title">Gantry</span>
      </header>
      {open && <div className="nav-backdrop" data-testid="nav-backdrop" onClick={() => setOpen(false)} aria-hidden="true" />}
      <aside className={`sidebar${open ? ' open' : ''}`} id="main-nav" data-testid="sidebar">
        <div className="sidebar-brand">
          <Logo size={26} />
          <span>Gantry</span>
        </div>
        <nav className="sidebar-nav" aria-label="Main">
          <div className="nav-section">Workloads</div>
          {NAV.map(({ href, label, testId, icon: Icon }) => (
            <Link
              key={href}
              href={href}
              data-testid={testId}
              className={`nav-link${isActive(href) ? ' active' : ''}`}
              aria-current={isActive(href) ? 'page' : undefined}
            >
              <Icon />
              {label}
            </Link>
          ))}
          <div className="nav-section">Administration</div>
          {ADMIN_NAV.filter(
            ({ href }) =>
              !ADMINS_ONLY.has(href) || !me || me.role === 'tenant-admin' || me.role === 'platform-admin' || (href === '/audit' && me.role === 'team-admin'),
          ).map(({ href, label, testId, icon: Icon }) => (
            <Link
              key={href}
              href={href}
              data-testid={testId}
              className={`nav-link${isActive(href) ? ' active' : ''}`}
              aria-current={isActive(href) ? 'page' : undefined}
            >
              <Icon />
              {label}
            </Link>
          ))}
        </nav>
        <div className="sidebar-foot">
          {me && (
            <>
              <TeamSwitcher />
              <div className="whoami" data-testid="whoami">
                <div className="whoami-name" data-testid="whoami-name" title={me.name}>
                  {me.name}
                </div>
                <div className="whoami-role" data-testid="whoami-role">
                  {me.role}
                  <span className="whoami-kind">{me.kind === 'api-key' ? ' · API key' : ' · session'}</span>
                </div>
              </div>
            </>
          )}
          <button type="button" className="btn btn-ghost-dark btn-block" data-testid="sign-out" onClick={() => signOut()}>
            Sign out
          </button>
        </div>
      </aside>
    </>
  );
}

function IconMenu({ open }: { open: boolean }) {
  return (
    <svg viewBox="0 0 20 20" width="20" height="20" aria-hidden="true">
      {open ? (
        <path d="M5 5l10 10M15 5L5 15" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
      ) : (
        <path d="M3 5.5h14M3 10h14M3 14.5h14" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
      )}
    </svg>
  );
}

function IconHeatmap() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <rect x="1.5" y="1.5" width="3.5" height="3.5" rx="0.6" fill="currentColor" />
      <rect x="6.25" y="1.5" width="3.5" height="3.5" rx="0.6" fill="currentColor" opacity="0.5" />
      <rect x="11" y="1.5" width="3.5" height="3.5" rx="0.6" fill="currentColor" opacity="0.25" />
      <rect x="1.5" y="6.25" width="3.5" height="3.5" rx="0.6" fill="currentColor" opacity="0.35" />
      <rect x="6.25" y="6.25" width="3.5" height="3.5" rx="0.6" fill="currentColor" />
      <rect x="11" y="6.25" width="3.5" height="3.5" rx="0.6" fill="currentColor" opacity="0.6" />
      <rect x="1.5" y="11" width="3.5" height="3.5" rx="0.6" fill="currentColor" opacity="0.6" />
      <rect x="6.25" y="11" width="3.5" height="3.5" rx="0.6" fill="currentColor" opacity="0.25" />
      <rect x="11" y="11" width="3.5" height="3.5" rx="0.6" fill="currentColor" />
    </svg>
  );
}
function IconUtilization() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <path d="M1.5 14.5h13M3 12V8.5M6.5 12V4M10 12V6.5M13.5 12V2.5" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" fill="none" />
    </svg>
  );
}
function IconOverview() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <rect x="1.5" y="1.5" width="5.5" height="5.5" rx="1" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <rect x="9" y="1.5" width="5.5" height="5.5" rx="1" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <rect x="1.5" y="9" width="5.5" height="5.5" rx="1" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <rect x="9" y="9" width="5.5" height="5.5" rx="1" fill="none" stroke="currentColor" strokeWidth="1.4" />
    </svg>
  );
}
function IconJobs() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <path d="M2 3.5h12M2 8h12M2 12.5h8" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" fill="none" />
    </svg>
  );
}
function IconCluster() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <circle cx="8" cy="2.8" r="1.6" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <path d="M8 4.4v3M3.5 7.4h9M3.5 7.4v2M12.5 7.4v2" stroke="currentColor" strokeWidth="1.3" fill="none" />
      <rect x="1.5" y="9.6" width="4" height="4.6" rx="0.8" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <rect x="10.5" y="9.6" width="4" height="4.6" rx="0.8" fill="none" stroke="currentColor" strokeWidth="1.3" />
    </svg>
  );
}
function IconEndpoints() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <path d="M1.5 11.5l3.5-4 3 2.5 5.5-7" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" strokeLinejoin="round" fill="none" />
      <circle cx="13.5" cy="3" r="1.2" fill="currentColor" />
      <path d="M1.5 14.5h13" stroke="currentColor" strokeWidth="1.2" strokeLinecap="round" />
    </svg>
  );
}
function IconBareMetal() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <rect x="1.5" y="2.5" width="13" height="4.5" rx="1" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <rect x="1.5" y="9" width="13" height="4.5" rx="1" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <circle cx="4" cy="4.75" r="0.9" fill="currentColor" />
      <circle cx="4" cy="11.25" r="0.9" fill="currentColor" />
    </svg>
  );
}
function IconIncidents() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <path d="M8 1.8 14.6 13.6H1.4Z" fill="none" stroke="currentColor" strokeWidth="1.4" strokeLinejoin="round" />
      <path d="M8 6v3.6" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
      <circle cx="8" cy="11.7" r="0.9" fill="currentColor" />
    </svg>
  );
}

function IconFairness() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <path d="M8 2v12M4 14h8M2.5 5h11" stroke="currentColor" strokeWidth="1.3" strokeLinecap="round" fill="none" />
      <path d="M2.5 5 1 9h3ZM13.5 5 12 9h3Z" fill="none" stroke="currentColor" strokeWidth="1.2" strokeLinejoin="round" />
    </svg>
  );
}

function IconQuotas() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <rect x="1.5" y="3" width="13" height="3.2" rx="1" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <rect x="1.5" y="9.8" width="13" height="3.2" rx="1" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <path d="M2.5 4.6h6M2.5 11.4h9.5" stroke="currentColor" strokeWidth="1.8" />
    </svg>
  );
}
function IconReservations() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <rect x="1.5" y="2.5" width="13" height="12" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <path d="M1.5 6h13M5 1v3M11 1v3" stroke="currentColor" strokeWidth="1.3" />
      <path d="M4 9.5h5" stroke="currentColor" strokeWidth="2" />
    </svg>
  );
}
function IconKeys() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <circle cx="5" cy="8" r="3" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <path d="M8 8h6.5M12 8v2.5M14 8v2" stroke="currentColor" strokeWidth="1.4" strokeLinecap="round" fill="none" />
    </svg>
  );
}
function IconAudit() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <rect x="2.5" y="1.5" width="11" height="13" rx="1.2" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <path d="M5 5h6M5 8h6M5 11h3.5" stroke="currentColor" strokeWidth="1.3" strokeLinecap="round" />
    </svg>
  );
}

function IconPlanner() {
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      <path d="M2 13.5h12" stroke="currentColor" strokeWidth="1.3" strokeLinecap="round" />
      <path d="M3.5 11l3-4 2.5 2 3.5-5" fill="none" stroke="currentColor" strokeWidth="1.3" strokeLinecap="round" strokeLinejoin="round" />
      <path d="M3.5 8.5l3-1.5 2.5 1 3.5-2.5" fill="none" stroke="currentColor" strokeWidth="1.3" strokeDasharray="1.6 1.6" strokeLinecap="round" />
    </svg>
  );
}
