import type { RawOpTrace } from '../../../../shared/stages/ops/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import { validateOpTrace } from '../../parsers/op-trace';

const MARKER = '@@AMW-OPS@@';

const FALLBACK =
  /operator '([\w:.]+)' is not currently supported on the NPU backend and will fall back to run on the CPU/g;

/**
 * What the run itself said on an NPU host: torch_npu's one-time CPU-fallback warnings (in the
 * harness's captured warnings or on stderr) and AICPU notices from CANN's log on stdout.
 */
export function observedOnHost(
  output: string,
  trace: RawOpTrace,
): { observedFallbacks: string[]; aicpu: string[] } {
  const text = `${output}\n${trace.warnings.join('\n')}`;
  const ops = new Set<string>();
  for (const m of text.matchAll(FALLBACK))
    ops.add(m[1]!.startsWith('aten::') ? m[1]! : `aten::${m[1]!}`);
  const aicpu = [
    ...new Set(
      output
        .split('\n')
        .filter((l) => /aicpu/i.test(l) && !l.startsWith('@@AMW-OPS@@'))
        .map((l) => l.trim().slice(0, 300)),
    ),
  ].slice(0, 50);
  return { observedFallbacks: [...ops].sort(), aicpu };
}

/** The harness's JSON line out of the section's output; what came before it is the run's log. */
export function readTrace(text: string): RawOpTrace {
  const at = text.lastIndexOf(MARKER);
  if (at < 0)
    throw new AmwError(
      'PROBE_FAILED',
      msg('errors.text.opsNoResult', { output: text.slice(-600) || '—' }),
    );
  const line = text.slice(at + MARKER.length).split('\n')[0]!;
  let doc: RawOpTrace;
  try {
    doc = JSON.parse(line) as RawOpTrace;
  } catch {
    throw new AmwError('PROBE_FAILED', msg('errors.text.opsNotJson'));
  }
  if (!Array.isArray(doc?.ops) || !Array.isArray(doc?.inputs))
    throw new AmwError('PROBE_FAILED', msg('errors.text.opsNoTable'));
  return validateOpTrace(doc);
}
