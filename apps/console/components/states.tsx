'use client';

import { describeError } from '@/lib/api';

export function ErrorPanel({ error, onRetry, title = 'Something went wrong' }: { error: unknown; onRetry?: () => void; title?: string }) {
  return (
    <div className="alert alert-error panel-error" role="alert" data-testid="error-panel">
      <div>
        <strong>{title}.</strong> {describeError(error)}
      </div>
      {onRetry && (
        <button type="button" className="btn btn-sm" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <div className="empty">{children}</div>;
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return <div className="loading-block">{label}</div>;
}
