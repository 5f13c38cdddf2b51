'use client';

import { useEffect, useState } from 'react';

/** The request that calls an endpoint, from where the console is served (it forwards /v1 to the API). */
export function invokeRequest(origin: string, endpointId: string): { url: string; curl: string } {
  const url = `${origin}/v1/endpoints/${encodeURIComponent(endpointId)}/invoke`;
  const curl = [
    `curl -X POST '${url}' \\`,
    `  -H "Authorization: Bearer $GANTRY_API_KEY" \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d '{"input":"Hello!"}'`,
  ].join('\n');
  return { url, curl };
}

/** The endpoint's URL and a ready-to-copy curl request (any key with endpoints:read may call it). */
export function EndpointCallSnippet({ endpointId }: { endpointId: string }) {
  const [origin, setOrigin] = useState('');
  useEffect(() => setOrigin(window.location.origin), []);
  const { url, curl } = invokeRequest(origin, endpointId);
  return (
    <div className="card pad" data-testid="endpoint-call">
      <dl className="kv">
        <dt>URL</dt>
        <dd>
          <code data-testid="endpoint-url">POST {url}</code> <CopyButton text={url} testId="endpoint-url-copy" label="Copy URL" />
        </dd>
      </dl>
      <pre className="endpoint-snippet mono small" data-testid="endpoint-curl">
        {curl}
      </pre>
      <CopyButton text={curl} testId="endpoint-curl-copy" label="Copy request" />{' '}
      <span className="muted small">
        Set <code>GANTRY_API_KEY</code> to a key with <code>endpoints:read</code>. At zero replicas the request waits for a cold start (up to 60 s).
      </span>
    </div>
  );
}

function CopyButton({ text, testId, label }: { text: string; testId: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      className="btn btn-sm btn-outline"
      data-testid={testId}
      onClick={() => {
        const done = (ok: boolean) => {
          setState(ok ? 'copied' : 'failed');
          setTimeout(() => setState('idle'), 2000);
        };
        if (!navigator.clipboard) return done(false);
        navigator.clipboard.writeText(text).then(
          () => done(true),
          () => done(false),
        );
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select and copy by hand' : label}
    </button>
  );
}
