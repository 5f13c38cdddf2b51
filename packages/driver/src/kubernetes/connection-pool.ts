/**
 * One keep-alive connection pool per KubeConfig. @kubernetes/client-node 1.4 builds a new
 * https.Agent for every request, so every call pays a TCP connect and a TLS handshake on both
 * sides: at a hundred pod starts a second that is most of the CPU the client and the API server
 * spend. The driver and the kube-emulator both hand their configs through here.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

const pools = new WeakMap<KubeConfig, () => HttpAgent | undefined>();

/**
 * A keep-alive agent that hands a freed socket to the next request one turn of the event loop
 * later. node-fetch 2 (under @kubernetes/client-node 1.x) decides that a chunked response ended
 * early ("Premature close") when, as the response closes, its socket has a 'data' listener: with
 * requests waiting for a socket, Node gives the socket to the next one at once, whose listener
 * then fails the response that just ended well. A create that succeeded was then sent again
 * (409) and settled with a list: two writes and a read per pod instead of one write.
 */
function deferringFree<A extends HttpAgent>(agent: A): A {
  const emit = agent.emit.bind(agent);
  agent.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== 'free') return emit(event, ...args);
    setImmediate(() => emit(event, ...args));
    return true;
  }) as A['emit'];
  return agent;
}

/** Makes the config hand out one keep-alive agent instead of a new one per request (idempotent). */
export function withConnectionPool(config: KubeConfig, maxSockets = 64): KubeConfig {
  if (pools.has(config)) return config;
  let agent: HttpAgent | undefined;
  pools.set(config, () => agent);
  const pooled = config as unknown as { createAgent(cluster: { server?: string } | null, options: AgentOptions): HttpAgent };
  const original = pooled.createAgent.bind(config);
  pooled.createAgent = (cluster, options) => {
    if (cluster && (cluster as { proxyUrl?: string }).proxyUrl) return original(cluster, options);
    if (!agent) {
      agent = deferringFree(
        cluster?.server?.startsWith('http:')
          ? new HttpAgent({ keepAlive: true, maxSockets })
          : new HttpsAgent({ ...options, keepAlive: true, maxSockets, maxFreeSockets: maxSockets }),
      );
    }
    return agent;
  };
  return config;
}

/** Closes the pooled connections (idle keep-alive sockets would keep the process alive). */
export function closeConnectionPool(config: KubeConfig): void {
  pools.get(config)?.()?.destroy();
}
