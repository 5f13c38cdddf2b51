'use client';

import { useEffect, useRef, useState } from 'react';
import type { JobLogLine } from '@gantry/contracts';
import { describeError } from '@/lib/api';
import { formatTime } from '@/lib/format';
import { useClient } from '@/lib/session';

/** How often the panel asks for new lines: while the job runs, and after it ended (its last lines arrive within seconds). */
const FOLLOW_MS = 2000;
const IDLE_MS = 10_000;
/** Lines the panel keeps (the oldest go first). */
const KEEP = 2000;

const keyOf = (l: JobLogLine) => `${l.replica}/${l.seq}`;

/**
 * A job's log: the newest lines first loaded, then followed (only lines since the last one are
 * asked for). Scrolled to the end while following; scrolling up stops following.
 */
export function JobLogsPanel({ jobId, active }: { jobId: string; active: boolean }) {
  const client = useClient();
  const [lines, setLines] = useState<JobLogLine[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState<string>();
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLPreElement>(null);
  const activeRef = useRef(active);
  activeRef.current = active;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = new Set<string>();
    let kept: JobLogLine[] = [];
    const pull = async () => {
      try {
        const since = kept.at(-1)?.at;
        const r = await client.jobs.logs(jobId, since ? { since, tail: 5000 } : { tail: 500 });
        if (stopped) return;
        if (!since) setTruncated(r.truncated);
        const fresh = r.lines.filter((l) => !seen.has(keyOf(l)));
        for (const l of fresh) seen.add(keyOf(l));
        if (fresh.length) {
          kept = [...kept, ...fresh].slice(-KEEP);
          setLines(kept);
        }
        setLoaded(true);
        setError(undefined);
      } catch (e) {
        if (!stopped) setError(describeError(e));
      }
      if (!stopped) timer = setTimeout(() => void pull(), activeRef.current ? FOLLOW_MS : IDLE_MS);
    };
    void pull();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [client, jobId]);

  useEffect(() => {
    const el = box.current;
    if (el && follow) el.scrollTop = el.scrollHeight;
  }, [lines, follow]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (atEnd !== follow) setFollow(atEnd);
  };

  return (
    <section className="section" aria-labelledby="job-logs-title">
      <h2 className="section-title" id="job-logs-title">
        Logs{' '}
        <span className="muted small">
          {active ? (follow ? 'following, new lines every 2 s' : 'paused: scroll to the end to follow') : 'the job has ended'}
        </span>
      </h2>
      {error && (
        <div className="inline-error" role="alert" data-testid="job-logs-error">
          Cannot load the log: {error}
        </div>
      )}
      {loaded && lines.length === 0 ? (
        <div className="card pad muted" data-testid="job-logs-empty">
          {active ? 'No output yet: the log appears once the job starts.' : 'This job wrote nothing.'}
        </div>
      ) : (
        <div className="card log-card">
          {truncated && <div className="pad muted small">Showing the newest 500 lines.</div>}
          <pre
            className="log-box"
            ref={box}
            onScroll={onScroll}
            tabIndex={0}
            aria-label="Job log"
            aria-live="off"
            data-testid="job-logs"
            data-lines={lines.length}
            data-following={follow ? 'true' : 'false'}
          >
            {lines.map((l) => (
              <div key={keyOf(l)} className={`log-line log-${l.stream}`} data-testid="job-log-line" data-replica={l.replica} data-stream={l.stream}>
                <time className="log-time" dateTime={l.at}>
                  {formatTime(l.at)}
                </time>
                <span className="log-replica">{l.stream === 'gantry' ? 'gantry' : `r${l.replica}`}</span>
                <span className="log-text">{l.text}</span>
              </div>
            ))}
          </pre>
          {!follow && active && (
            <div className="pad">
              <button type="button" className="btn btn-outline btn-sm" data-testid="job-logs-follow" onClick={() => setFollow(true)}>
                Follow the newest lines
              </button>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
