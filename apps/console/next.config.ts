import type { NextConfig } from 'next';

/** The browser talks to the API same-origin: proxy.ts forwards /v1/* and /healthz at run time. */
const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
};

export default nextConfig;
