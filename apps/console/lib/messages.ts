/**
 * The API's messages are written for API clients too: they name the rule that refused a request
 * ("rule team_admin_ceiling: ..."), call the every-model quota flavour `*`, and carry exact
 * figures ("16.965"). The console says the same in words: the rule name goes (it stays in the
 * API answer), `*` reads "all GPU models", long decimals are rounded, and the sentence starts
 * with a capital.
 */
export function humanizeMessage(message: string): string {
  let m = message.trim();
  // "rule team_admin_ceiling: a team admin cannot ..." -> "a team admin cannot ..."
  m = m.replace(/(^|[.;]\s+)rule [a-z0-9_]+:\s*/g, '$1');
  // the quota flavour `*` standing alone as a word
  m = m.replace(/(^|[\s(,])\*(?=$|[\s),.;:])/g, '$1all GPU models');
  // 16.965 -> 17, 1.234 -> 1.2 (numbers of 3+ decimals; never parts of names, versions or addresses)
  m = m.replace(/(?<![\w.])(\d+)\.(\d{3,})(?![\w.])/g, (_, int: string, dec: string) => roundForPeople(Number(`${int}.${dec}`)));
  return m.charAt(0).toUpperCase() + m.slice(1);
}

function roundForPeople(n: number): string {
  if (n >= 10) return String(Math.round(n));
  return String(Math.round(n * 10) / 10);
}
