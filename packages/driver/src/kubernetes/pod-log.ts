/**
 * A pod log read with `timestamps=true`: each line is `<RFC 3339 time with nanoseconds> <text>`.
 * The seq of a line is its time in microseconds (with its rank among lines of the same
 * microsecond), so the same line read twice has the same seq.
 */
import type { JobLogLine } from '../types';

/** Seqs count microseconds from 2020 (x 16 for same-microsecond lines): exact doubles until 2037. */
const SEQ_EPOCH_MICROS = Date.parse('2020-01-01T00:00:00Z') * 1000;

const STAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d) ?(.*)$/;

export function parsePodLog(text: string, replica: number): JobLogLine[] {
  const lines: JobLogLine[] = [];
  let lastMicros = -1;
  let rank = 0;
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    const m = STAMPED.exec(raw);
    if (!m) {
      // a line without a time (a runtime that does not stamp): it follows the previous one
      const prev = lines.at(-1);
      lines.push({ at: prev?.at ?? 0, replica, seq: (prev?.seq ?? 0) + 1, stream: 'stdout', text: raw });
      continue;
    }
    const fraction = (m[2] ?? '').padEnd(9, '0');
    const seconds = Date.parse(`${m[1]}${m[3]}`);
    const micros = seconds * 1000 + Math.floor(Number(fraction) / 1000);
    rank = micros === lastMicros ? rank + 1 : 0;
    lastMicros = micros;
    lines.push({ at: Math.floor(micros / 1000), replica, seq: (micros - SEQ_EPOCH_MICROS) * 16 + rank, stream: 'stdout', text: m[4] });
  }
  return lines;
}
