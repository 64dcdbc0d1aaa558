import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../../../shared/api';
import { DOCTOR_RULES_NS } from '../../../shared/api';
import { msg } from '../../../shared/api/text';
import { textIn } from '../i18n';
import { AmwError } from '../../../shared/errors';
import { withDiagnosis, withErrorDiagnosis } from './diagnose-outcomes';

const failed = (evidence: unknown, status: CheckOutcome['status'] = 'fail'): CheckOutcome => ({
  id: 'env.torch-npu-import',
  title: msg('stage-env:name'),
  status,
  summary: msg('stage-env:name'),
  evidence,
  remediation: null,
});

describe('failed checks carry the error doctor’s diagnosis', () => {
  // a real line from the doctor rule's examples (ascend-host-formats.md §4)
  const traceback = [
    'Traceback (most recent call last):',
    '  File "<string>", line 1, in <module>',
    'ImportError: libascendcl.so: cannot open shared object file: No such file or directory',
  ].join('\n');

  it('names the rule and the line, wherever the text sits in the evidence', () => {
    const [o] = withDiagnosis([failed({ import: { traceback } })]);
    expect(o!.diagnosis).toEqual([
      expect.objectContaining({
        rule: 'libascendcl-missing',
        text: expect.stringContaining('libascendcl.so'),
      }),
    ]);
    // its cause and fix read in either language from the same stored rule id
    const key = `${DOCTOR_RULES_NS}:${o!.diagnosis![0]!.rule}.fix`;
    const en = textIn('en')(msg(key));
    const zh = textIn('zh-CN')(msg(key));
    expect(en).not.toBe(key);
    expect(zh).not.toBe(en);
  });

  it('leaves passing checks and unknown text alone', () => {
    const [pass, unknown] = withDiagnosis([
      failed({ traceback }, 'pass'),
      failed({ log: 'everything went fine, 42 steps' }),
    ]);
    expect(pass!.diagnosis).toBeUndefined();
    expect(unknown!.diagnosis).toBeUndefined();
  });
});

describe('a run that ends by an exception carries the diagnosis in its error', () => {
  it('adds what the doctor recognises to the error detail, keeping code and message', () => {
    const err = new AmwError(
      'PROBE_FAILED',
      'The op capture printed no result. Last output: ImportError: libascendcl.so: cannot open shared object file: No such file or directory',
      { host: 'npu-1' },
    );
    const out = withErrorDiagnosis(err) as AmwError;
    expect(out.code).toBe('PROBE_FAILED');
    expect(out.message).toBe(err.message);
    expect(out.detail).toMatchObject({
      host: 'npu-1',
      diagnosis: [expect.objectContaining({ rule: 'libascendcl-missing' })],
    });
  });

  it('keeps an error’s own text, so the diagnosed error still reads in the user’s language', () => {
    const err = new AmwError(
      'PROBE_FAILED',
      msg('errors.text.opsNoResult', {
        output:
          'ImportError: libascendcl.so: cannot open shared object file: No such file or directory',
      }),
    );
    const out = withErrorDiagnosis(err) as AmwError;
    expect(out.text).toEqual(err.text);
    expect(out.message).toMatch(/^The op capture printed no result\. Last output: ImportError/);
    expect(out.detail).toMatchObject({
      diagnosis: [expect.objectContaining({ rule: 'libascendcl-missing' })],
    });
  });

  it('passes other errors and unrecognised text through unchanged', () => {
    const plain = new Error('boom');
    expect(withErrorDiagnosis(plain)).toBe(plain);
    const unknown = new AmwError('CONNECTION_REFUSED', 'refused');
    expect(withErrorDiagnosis(unknown)).toBe(unknown);
  });
});
