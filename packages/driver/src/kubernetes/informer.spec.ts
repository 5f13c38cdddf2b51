import { Informer, type Delta, type InformerSource, type KubeObject } from './informer';
import { waitFor } from './__tests__/wait-for';

type Obj = KubeObject & { value?: number };
const obj = (name: string, resourceVersion: string, value = 0): Obj => ({ metadata: { name, resourceVersion }, value });

/** A scripted API: each list returns the next state; each watch runs the next script step. */
class ScriptedSource implements InformerSource<Obj> {
  readonly watchedFrom: string[] = [];
  lists = 0;
  constructor(
    private readonly states: { items: Obj[]; resourceVersion: string }[],
    private readonly watches: ((emit: (type: string, o: unknown) => void, done: (err?: unknown) => void) => void)[],
  ) {}
  async list() {
    const state = this.states[Math.min(this.lists++, this.states.length - 1)];
    if (!state) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    return state;
  }
  async watch(resourceVersion: string, _t: number, onEvent: (type: string, o: unknown) => void, onDone: (err?: unknown) => void) {
    this.watchedFrom.push(resourceVersion);
    const step = this.watches.shift();
    if (step) setImmediate(() => step(onEvent, onDone));
    return () => undefined; // stays open when the script has no more steps
  }
}

const collect = () => {
  const deltas: Delta<Obj>[] = [];
  return {
    deltas,
    onDelta: (d: Delta<Obj>) => deltas.push(d),
    summary: () => deltas.map((d) => `${d.type} ${d.object.metadata?.name}${d.initial ? ' (initial)' : ''}`),
  };
};

describe('Informer', () => {
  it('lists, watches from the list version, follows events and bookmarks, and resumes from the last one', async () => {
    const source = new ScriptedSource(
      [{ items: [obj('a', '10')], resourceVersion: '10' }],
      [
        (emit, done) => {
          emit('ADDED', obj('b', '11'));
          emit('BOOKMARK', { metadata: { resourceVersion: '15' } });
          done(); // the server closed the watch (its timeout)
        },
        (emit) => emit('MODIFIED', obj('a', '16', 1)),
      ],
    );
    const { onDelta, summary } = collect();
    const informer = new Informer({ what: 'test', source, onDelta, backoff: { initialMs: 1, maxMs: 5 } });
    informer.start();
    await waitFor('the modification', () => informer.get(undefined, 'a')?.value === 1, 2000);
    await informer.stop();
    expect(source.watchedFrom.slice(0, 2)).toEqual(['10', '15']);
    expect(summary()).toEqual(['ADDED a (initial)', 'ADDED b', 'MODIFIED a']);
  });

  it('relists on 410 Gone and delivers only what differs from its cache', async () => {
    const source = new ScriptedSource(
      [
        { items: [obj('a', '10'), obj('b', '10')], resourceVersion: '10' },
        { items: [obj('a', '10'), obj('c', '30')], resourceVersion: '30' }, // b deleted, c added while away
      ],
      [(emit) => emit('ERROR', { kind: 'Status', code: 410, message: 'too old resource version: 10 (25)' })],
    );
    const { onDelta, summary } = collect();
    const informer = new Informer({ what: 'test', source, onDelta, backoff: { initialMs: 1, maxMs: 5 } });
    informer.start();
    await waitFor('the relist', () => informer.stats.lists === 2, 2000);
    await waitFor('the next watch', () => source.watchedFrom.length === 2, 2000);
    await informer.stop();
    expect(informer.stats.gone).toBe(1);
    expect(source.watchedFrom).toEqual(['10', '30']);
    expect(summary()).toEqual(['ADDED a (initial)', 'ADDED b (initial)', 'ADDED c', 'DELETED b']);
  });

  it('backs off with jitter while the API server is unreachable, then reconnects from where it was', async () => {
    const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const source = new ScriptedSource(
      [{ items: [obj('a', '10')], resourceVersion: '10' }],
      [(_e, done) => done(refused()), (_e, done) => done(refused()), (emit) => emit('ADDED', obj('b', '12'))],
    );
    const { onDelta } = collect();
    const warnings: string[] = [];
    const informer = new Informer({ what: 'test', source, onDelta, backoff: { initialMs: 1, maxMs: 5 }, warn: (m) => warnings.push(m) });
    informer.start();
    await waitFor('b', () => informer.get(undefined, 'b') !== undefined, 2000);
    await informer.stop();
    expect(source.lists).toBe(1); // no relist needed: the version was still good
    expect(source.watchedFrom).toEqual(['10', '10', '10']);
    expect(warnings).toHaveLength(2);
    expect(informer.stats.errors).toBe(2);
  });
});
