/**
 * CSV for exports a person opens in a spreadsheet (RFC 4180 quoting, CSV-injection safe).
 * Every CSV the API writes goes through here: never join cells by hand.
 */

/** A cell: text, a number, or nothing (an empty cell). */
export type CsvValue = string | number | null | undefined;

/**
 * Text that a spreadsheet (Excel, LibreOffice, Google Sheets) would read as a formula: it starts
 * with `=`, `+`, `-` or `@`, or with a tab or carriage return that the spreadsheet drops before
 * it sees one of those (OWASP "CSV Injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;
/** Cells with these are quoted (RFC 4180: comma, quote, line breaks). */
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell. Numbers are written as numbers (a negative number stays a number); text that
 * starts like a formula gets a leading single quote, so the spreadsheet shows it as text, and
 * is quoted; text with a comma, quote or line break is quoted with quotes doubled.
 */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = String(value);
  if (FORMULA_START.test(text)) return quote(`'${text}`);
  return NEEDS_QUOTES.test(text) ? quote(text) : text;
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** One line of cells, without its line break. */
export const csvRow = (values: readonly CsvValue[]): string => values.map(csvCell).join(',');

/** A whole document: one line per row, each ended by `\n`. */
export const toCsv = (rows: readonly (readonly CsvValue[])[]): string => rows.map((r) => `${csvRow(r)}\n`).join('');
