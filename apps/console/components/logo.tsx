/** The Gantry mark: a gantry crane over a row of GPUs, drawn inline (no asset download). */
export function Logo({ size = 28 }: { size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" className="logo">
      <rect x="1" y="1" width="30" height="30" rx="7" fill="#2f6fed" />
      <path d="M7 9h18M9 9v15M23 9v15" stroke="#fff" strokeWidth="2.4" strokeLinecap="round" />
      <rect x="12" y="17" width="3" height="7" rx="1" fill="#9ec0ff" />
      <rect x="17" y="14" width="3" height="10" rx="1" fill="#fff" />
    </svg>
  );
}
