'use client';

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
  { href: '/cluster', label: 'Cluster', testId: 'nav-cluster', icon: IconCluster },
] as const;

export function Sidebar({ me }: { me: Me | undefined }) {
  const pathname = usePathname();
  const { signOut } = useSession();
  const isActive = (href: string) => (href === '/' ? pathname === '/' : pathname === href || pathname.startsWith(`${href}/`));

  return (
    <aside className="sidebar">
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
