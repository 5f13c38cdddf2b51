/**
 * One API request with a JSON body, over the config's pooled keep-alive connection, without
 * @kubernetes/client-node's typed (de)serialization: the calls made a hundred times a second (the
 * driver's pod creates; the emulator's Lease renewals and pod status) send a body they built
 * themselves and need at most the object the server answers with as plain JSON. The typed client
 * walks every field of the body and of the answer (a whole Pod), and turns timestamps into Dates
 * that lose a MicroTime's microseconds.
 */
import { request, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';

export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export type JsonContentType = 'application/json' | typeof MERGE_PATCH | typeof STRATEGIC_MERGE_PATCH;

/** A non-2xx answer; `code` is the HTTP status (what httpStatusOf reads). */
export class KubeRequestError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${code} ${body.slice(0, 300)}`);
    this.name = 'KubeRequestError';
  }
}

export interface JsonRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** e.g. `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1` */
  path: string;
  body?: unknown;
  contentType?: JsonContentType;
}

/** Sends the request; resolves with the parsed answer (`undefined` when `parse` is false). */
export async function kubeJsonRequest<T>(config: KubeConfig, req: JsonRequest, parse = true): Promise<T> {
  const server = config.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig names no cluster');
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  const options: RequestOptions = {
    method: req.method,
    headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': req.contentType ?? 'application/json' }) },
  };
  // the token header, TLS settings, and the pooled agent (connection-pool.ts)
  await config.applyToHTTPSOptions(options);
  const url = new URL(req.path, server);
  const send = url.protocol === 'http:' ? httpRequest : request;
  const what = `${req.method} ${req.path}`;
  return new Promise<T>((resolve, reject) => {
    const r = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        if (ok && !parse) return resolve(undefined as T);
        const text = Buffer.concat(chunks).toString('utf8');
        if (!ok) return reject(new KubeRequestError(status, text, what));
        try {
          resolve((text ? JSON.parse(text) : undefined) as T);
        } catch (err) {
          reject(err);
        }
      });
    });
    r.on('error', reject);
    r.end(body);
  });
}
