/** A planner input that cannot be used: names the row (1-based data row, or null for the whole input) and the field. */
export interface InputProblem {
  /** e.g. 'trace', 'cluster', 'policies' */
  source: string;
  /** 1-based data row (the header is row 0), or null. */
  row: number | null;
  field: string;
  problem: string;
}

export class PlannerInputError extends Error {
  constructor(readonly problems: InputProblem[]) {
    super(problems.map(describeProblem).join('; '));
    this.name = 'PlannerInputError';
  }
}

export function describeProblem(p: InputProblem): string {
  return `${p.source}${p.row === null ? '' : ` row ${p.row}`}: ${p.field}: ${p.problem}`;
}

/** Collects problems, stops at `max` so a broken file does not yield megabytes of errors. */
export class Problems {
  readonly list: InputProblem[] = [];
  constructor(
    readonly source: string,
    private readonly max = 20,
  ) {}
  add(row: number | null, field: string, problem: string): void {
    if (this.list.length < this.max) this.list.push({ source: this.source, row, field, problem });
  }
  get full(): boolean {
    return this.list.length >= this.max;
  }
  throwIfAny(): void {
    if (this.list.length) throw new PlannerInputError(this.list);
  }
}

/** Splits a small CSV (no quoted commas: the openb files and Gantry's exports have none). */
export function parseCsv(text: string, source: string, required: readonly string[]): { head: string[]; rows: Record<string, string>[] } {
  const lines = text.split(/\r?\n/).filter((l) => l.trim().length > 0);
  const problems = new Problems(source);
  if (lines.length === 0) {
    problems.add(null, 'header', 'the file is empty');
    problems.throwIfAny();
  }
  const head = lines[0]!.split(',').map((h) => h.trim());
  for (const f of required) if (!head.includes(f)) problems.add(0, f, `missing column (the header has ${head.join(', ')})`);
  problems.throwIfAny();
  const rows = lines.slice(1).map((l, i) => {
    const cells = l.split(',');
    if (cells.length !== head.length) problems.add(i + 1, 'row', `has ${cells.length} cells, the header has ${head.length}`);
    const row: Record<string, string> = {};
    head.forEach((h, k) => (row[h] = (cells[k] ?? '').trim()));
    return row;
  });
  problems.throwIfAny();
  return { head, rows };
}
