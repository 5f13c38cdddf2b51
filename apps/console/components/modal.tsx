'use client';

import { useEffect, useId, useRef, useState } from 'react';
import { createPortal } from 'react-dom';

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** The elements Tab can reach inside `root`, in order. */
function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.getClientRects().length > 0);
}

/**
 * A modal dialog over the whole console (rendered on <body>, so the backdrop dims the sidebar
 * too): role="dialog" with aria-modal, the page behind made inert, Tab and Shift+Tab kept inside,
 * Escape or a click on the backdrop closes it, and focus goes back where it was on close.
 */
export function Modal({
  title,
  onClose,
  children,
  testId,
  size = 'md',
  initialFocus,
}: {
  title: React.ReactNode;
  onClose: () => void;
  children: React.ReactNode;
  testId?: string;
  size?: 'sm' | 'md';
  /** A selector inside the dialog to focus first (default: the first field or button). */
  initialFocus?: string;
}) {
  const titleId = useId();
  const dialog = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);

  useEffect(() => {
    if (!mounted) return;
    const root = dialog.current;
    if (!root) return;
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const page = document.querySelector<HTMLElement>('.shell');
    const wasInert = page?.inert ?? false;
    if (page) page.inert = true;
    const first = (initialFocus && root.querySelector<HTMLElement>(initialFocus)) || root.querySelector<HTMLElement>('[autofocus]') || focusables(root)[0];
    (first ?? root).focus();

    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.stopPropagation();
        closeRef.current();
        return;
      }
      if (e.key !== 'Tab') return;
      const items = focusables(root);
      if (items.length === 0) {
        e.preventDefault();
        return;
      }
      const firstItem = items[0]!;
      const lastItem = items[items.length - 1]!;
      const active = document.activeElement;
      if (e.shiftKey && (active === firstItem || !root.contains(active))) {
        e.preventDefault();
        lastItem.focus();
      } else if (!e.shiftKey && (active === lastItem || !root.contains(active))) {
        e.preventDefault();
        firstItem.focus();
      }
    };
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('keydown', onKey, true);
      if (page) page.inert = wasInert;
      // back to the control that opened the dialog, if it is still on the page
      if (before && before.isConnected) before.focus();
    };
  }, [mounted, initialFocus]);

  if (!mounted) return null;
  return createPortal(
    <div className="modal-backdrop" data-testid="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={`modal modal-${size}`} role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid={testId} ref={dialog} tabIndex={-1}>
        <div className="modal-head">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="btn-close" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </div>
        {children}
      </div>
    </div>,
    document.body,
  );
}

/**
 * Asks before an action that changes the cluster or cannot be undone. `busy` keeps it open while
 * the request runs; `error` shows the refusal in the dialog (it does not stay stuck open silently).
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  tone = 'primary',
  busy = false,
  error,
  onConfirm,
  onCancel,
}: {
  title: React.ReactNode;
  children: React.ReactNode;
  confirmLabel: string;
  tone?: 'primary' | 'danger';
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Modal title={title} onClose={onCancel} testId="confirm-dialog" size="sm" initialFocus='[data-testid="confirm-cancel"]'>
      <div className="modal-body">{children}</div>
      {error && (
        <div className="alert alert-error modal-alert" role="alert" data-testid="confirm-error">
          {error}
        </div>
      )}
      <div className="modal-foot">
        <button type="button" className="btn" data-testid="confirm-cancel" onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className={`btn ${tone === 'danger' ? 'btn-danger' : 'btn-primary'}`}
          data-testid="confirm-accept"
          disabled={busy}
          onClick={onConfirm}
        >
          {confirmLabel}
        </button>
      </div>
    </Modal>
  );
}
