import { formatTime } from '@/lib/format';

export interface TimelineEntry {
  id: string;
  type: string;
  message: string;
  createdAt: string;
}

/** A list of events, oldest first (a job's, a node's, a bare-metal lease's): time, type, message. */
export function Timeline({ events, testId, itemTestId }: { events: TimelineEntry[]; testId: string; itemTestId: string }) {
  return (
    <ol className="timeline" data-testid={testId}>
      {events.map((e) => (
        <li key={e.id} className={`timeline-item ev-${e.type.replace(/[^a-z0-9-]/gi, '-').toLowerCase()}`} data-testid={itemTestId} data-type={e.type}>
          <span className="timeline-dot" />
          <time className="timeline-time mono" dateTime={e.createdAt}>
            {formatTime(e.createdAt)}
          </time>
          <span className="timeline-type">{e.type}</span>
          <span className="timeline-msg">{e.message}</span>
        </li>
      ))}
    </ol>
  );
}
