import Link from 'next/link';

export default function NotFound() {
  return (
    <main className="login">
      <div className="login-card">
        <div className="login-title">Page not found</div>
        <p className="muted">There is no console page at this address.</p>
        <Link href="/" className="btn btn-primary btn-block">
          Back to the overview
        </Link>
      </div>
    </main>
  );
}
