/**
 * Burn-in: a diagnostic under load (DCGM `dcgmi diag -r <level>`) run on a repaired GPU or node
 * before it goes back into service. Every driver runs it as an ordinary workload of kind
 * `burn-in`; what it found comes back as the workload's message, one line per GPU:
 *
 *   gpu <index> pass <detail>
 *   gpu <index> fail <detail>
 *
 * The simulated driver and the kube-emulator write these lines; on a real cluster the default
 * command (below) turns `dcgmi diag -j` output into them in the container's termination message.
 */

export const BURN_IN_KIND = 'burn-in';

export interface BurnInFinding {
  gpuIndex: number;
  result: 'pass' | 'fail';
  detail: string;
}

export function formatBurnInFindings(findings: readonly BurnInFinding[]): string {
  return findings.map((f) => `gpu ${f.gpuIndex} ${f.result} ${f.detail}`.trimEnd()).join('\n');
}

/** The per-GPU lines of a burn-in's message; other lines are ignored. */
export function parseBurnInFindings(message: string | undefined): BurnInFinding[] {
  const out: BurnInFinding[] = [];
  for (const line of (message ?? '').split('\n')) {
    const m = /^\s*gpu\s+(\d+)\s+(pass|fail)\b\s*(.*)$/i.exec(line);
    if (m) out.push({ gpuIndex: Number(m[1]), result: m[2]!.toLowerCase() as 'pass' | 'fail', detail: m[3]!.trim() });
  }
  return out;
}

/** DCGM's diagnostic image (the `dcgmi` CLI with its test plugins). */
export const DEFAULT_BURN_IN_IMAGE = 'nvcr.io/nvidia/cloud-native/dcgm:3.3.9-1-ubuntu22.04';

/**
 * The container command of a burn-in on Kubernetes: `dcgmi diag -r <level> -j` on the GPUs the
 * pod was given, the verdict per GPU written to /dev/termination-log as `gpu <i> pass|fail ...`
 * lines (node GPU indexes, from GANTRY_GPU_INDEXES), exit status non-zero when any test failed. Replace it with GANTRY_BURN_IN_COMMAND.
 */
export function defaultBurnInCommand(level: number): string[] {
  const script = [
    'set -u',
    `dcgmi diag -r ${level} -j > /tmp/diag.json; rc=$?`,
    // one line per GPU: fail when any test reported a Fail result for it
    `python3 - <<'PY' > /dev/termination-log || true`,
    'import json, os',
    // the container sees its GPUs as 0..n-1; GANTRY_GPU_INDEXES maps them back to the node's
    'host = [int(x) for x in os.environ.get("GANTRY_GPU_INDEXES", "").split(",") if x]',
    'name = lambda g: host[g] if g < len(host) else g',
    'd = json.load(open("/tmp/diag.json"))',
    'bad = {}',
    'for cat in d.get("DCGM GPU Diagnostic", {}).get("test_categories", []):',
    '    for t in cat.get("tests", []):',
    '        for r in t.get("results", []):',
    '            if r.get("status") == "Fail":',
    '                bad.setdefault(int(r.get("gpu_ids", r.get("gpu_id", 0))), t.get("name", "?") + ": " + r.get("info", ""))',
    'ids = [int(g) for g in (d.get("GPU Device IDs") or d.get("gpu_ids") or [])]',
    'for g in sorted(set(ids) | set(bad)):',
    '    print(f"gpu {name(g)} fail {bad[g]}" if g in bad else f"gpu {name(g)} pass all tests passed")',
    'PY',
    'exit $rc',
  ].join('\n');
  return ['/bin/sh', '-c', script];
}
