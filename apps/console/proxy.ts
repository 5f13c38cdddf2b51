import { NextResponse, type NextRequest } from 'next/server';

/**
 * Same-origin API: /v1/* and /healthz go to the Gantry API.
 *
 * next.config.ts declares the same rewrites, but Next bakes those into the build
 * (routes-manifest.json), so a build made with one GANTRY_API_URL would keep calling it
 * after `next start` with another. This proxy reads GANTRY_API_URL when the server runs,
 * so one build works against any API address.
 */
export function proxy(request: NextRequest) {
  const api = (process.env.GANTRY_API_URL ?? 'http://127.0.0.1:4000').replace(/\/+$/, '');
  const { pathname, search } = request.nextUrl;
  return NextResponse.rewrite(new URL(`${api}${pathname}${search}`));
}

export const config = {
  matcher: ['/v1/:path*', '/healthz'],
};
