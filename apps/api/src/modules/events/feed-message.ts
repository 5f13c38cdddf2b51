/** The live feed's messages on Redis: the events of one publisher poll, in batches. */
import type { LiveEvent } from '@gantry/contracts';

/**
 * Events per Redis message. One message per event cost a PUBLISH, a socket write and a parse in
 * every api process per event: about 1,000 a second under a load of 200 submissions a second.
 */
export const FEED_MESSAGE_EVENTS = 100;

/** What one message on the channel carries: the events of one poll, in the order they were read. */
export function encodeFeedMessage(events: LiveEvent[]): string {
  return JSON.stringify(events);
}

/**
 * The events of one message. A lone event (an object, as publishers before batching sent) is one
 * event; anything that is not JSON, or not an object or an array of them, is none.
 */
export function decodeFeedMessage(text: string): LiveEvent[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  const all = Array.isArray(v) ? v : [v];
  return all.filter((e): e is LiveEvent => typeof e === 'object' && e !== null && typeof (e as LiveEvent).id === 'string');
}
