import type { RawDump } from '../../../../shared/stages/precision/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';

const MARKER = '@@AMW-PRECISION@@';

/** The harness's JSON line out of the section's output; what came before it is the run's log. */
export function readDump(text: string, host: string): RawDump {
  const at = text.lastIndexOf(MARKER);
  if (at < 0)
    throw new AmwError(
      'PROBE_FAILED',
      `The dump on ${host} printed no result. Last output: ${text.slice(-600) || '(nothing)'}`,
      {
        host,
        text: msg('stage-precision:noResult', { host, tail: text.slice(-600) || '-' }),
      },
    );
  const line = text.slice(at + MARKER.length).split('\n')[0]!;
  let doc: RawDump;
  try {
    doc = JSON.parse(line) as RawDump;
  } catch {
    throw new AmwError('PROBE_FAILED', `The dump on ${host} printed a result that is not JSON.`, {
      host,
      text: msg('stage-precision:badResult', { host }),
    });
  }
  if (!Array.isArray(doc.modules))
    throw new AmwError('PROBE_FAILED', msg('errors.text.dumpNoTable', { host }), { host });
  return doc;
}
