import type { NextConfig } from 'next';

const dev = process.env.NODE_ENV !== 'production';

/**
 * The console's Content-Security-Policy. Everything is same-origin (the API too: proxy.ts
 * forwards /v1/*). Next's app router writes inline <script> tags (the RSC payload, bootstrap),
 * so scripts need 'unsafe-inline' (nonces would make every page dynamic); no other origin may
 * provide script. Styles: the stylesheet plus style attributes (charts, bars). Images: the icon,
 * data: and blob: URLs (the CSV export's download link). `next dev` also needs eval (React
 * Refresh) and its HMR websocket. Never framed (clickjacking).
 */
const CSP = [
  "default-src 'self'",
  `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ''}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  `connect-src 'self'${dev ? ' ws: wss:' : ''}`,
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = [
  { key: 'Content-Security-Policy', value: CSP },
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
  { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=(), payment=(), usb=()' },
];

/**
 * The browser talks to the API same-origin: proxy.ts forwards /v1/* and /healthz at run time.
 * Security headers on every page and asset (HSTS is the TLS terminator's, see docs/operations.md:
 * these headers are fixed at build time, the public URL is known when the server starts).
 */
const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  async headers() {
    return [{ source: '/:path*', headers: SECURITY_HEADERS }];
  },
};

export default nextConfig;
