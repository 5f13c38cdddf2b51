/** Any method not listed resolves to `fallback` (the steps these tests do not look at). */
export function fake<T = never>(methods: Partial<Record<string, (...a: never[]) => unknown>>, calls: string[], fallback: unknown = undefined): T {
  return new Proxy({} as object, {
    get:
      (_t, k: string) =>
      async (...a: unknown[]) => {
        calls.push(
          `${k} ${a
            .filter((x) => typeof x === 'string' || typeof x === 'number' || Array.isArray(x))
            .map((x) => JSON.stringify(x))
            .join(' ')}`.trim(),
        );
        const m = methods[k] as ((...x: unknown[]) => unknown) | undefined;
        return m ? m(...a) : fallback;
      },
  }) as T;
}
