import { describe, expect, it } from 'vitest';
import { profilingStage } from '../../../../shared/stages/profiling';
import { profilingCli } from './cli';

/** `amw run … --stage profiling` options as the stage's input, and what the input then accepts. */
const parse = (o: Record<string, unknown>) =>
  profilingStage.input.safeParse({
    stage: 'profiling',
    hosts: ['a'],
    entry: 'm.py:f',
    ...profilingCli.input(o),
  });

describe('profiling CLI: --ranks-per-host and --activities', () => {
  it('--ranks-per-host N and npus, --activities as a list', () => {
    const a = parse({ ranksPerHost: '4', activities: 'npu' });
    expect(a.success && a.data).toMatchObject({ ranksPerHost: 4, activities: ['npu'] });
    const b = parse({ ranksPerHost: 'npus', activities: ' cpu , npu ' });
    expect(b.success && b.data).toMatchObject({ ranksPerHost: 'npus', activities: ['cpu', 'npu'] });
  });

  it('refuses 0 ranks, a word other than npus and an unknown activity, naming the field', () => {
    for (const [o, field] of [
      [{ ranksPerHost: '0' }, 'ranksPerHost'],
      [{ ranksPerHost: 'all' }, 'ranksPerHost'],
      [{ activities: 'gpu' }, 'activities'],
    ] as const) {
      const r = parse(o);
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.path[0]).toBe(field);
    }
  });
});
