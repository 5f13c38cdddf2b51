/** Plain HTTPS calls to a kube-apiserver with a bearer token (TLS unverified: a loopback test server). */
import { request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface KubeEndpoint {
  /** `https://127.0.0.1:<port>` */
  server: string;
  token: string;
}

export function kubeRequest(api: KubeEndpoint, path: string, options: RequestOptions = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, api.server),
      { ...options, headers: { authorization: `Bearer ${api.token}`, ...options.headers }, rejectUnauthorized: false },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

export async function kubeText(api: KubeEndpoint, path: string): Promise<string> {
  const res = await kubeRequest(api, path);
  let body = '';
  for await (const chunk of res) body += (chunk as Buffer).toString();
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`);
  return body;
}

/** POST a JSON object; 409 AlreadyExists counts as done. */
export async function kubeCreate(api: KubeEndpoint, path: string, object: unknown): Promise<void> {
  const body = JSON.stringify(object);
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const req = request(
      new URL(path, api.server),
      { method: 'POST', headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' }, rejectUnauthorized: false },
      resolve,
    );
    req.on('error', reject);
    req.end(body);
  });
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString();
  if (res.statusCode !== 201 && res.statusCode !== 409) throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
}

export const kubeJson = async <T>(api: KubeEndpoint, path: string): Promise<T> => JSON.parse(await kubeText(api, path)) as T;
