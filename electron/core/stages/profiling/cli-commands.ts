import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Text } from '../../../../shared/api';
import type { ProfileCompare, ProfileResult } from '../../../../shared/stages/profiling/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { StageCommand } from '../define';
import { profileDocument } from './document';
import { compareProfiles } from './compare';
import { m } from './csv-stream';
import { importProfile } from './import';

type Show = (text: Text | null | undefined) => string;

const us = (x: number | null) => (x === null ? '-' : Math.round(x).toLocaleString('en-US'));
const pc = (x: number) => `${(x * 100).toFixed(1)}%`;
const hostList = (x: string) =>
  x
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);

function sessionOf(o: Record<string, unknown>): number | undefined {
  if (o.session === undefined) return undefined;
  const n = Number(o.session);
  if (!(Number.isInteger(n) && n > 0))
    throw new AmwError(
      'VALIDATION',
      msg('errors.text.sessionIdNumber', { value: String(o.session) }),
    );
  return n;
}

/**
 * `amw profile import DIR [--session ID | --store] [--json]`: reads torch_npu.profiler, msprof or
 * msprof-analyze output (any mix, any depth) and prints where the step goes and what to do; with
 * --session / --store it is stored as a run of a session. Without them nothing is stored.
 */
const importCommand: StageCommand = {
  path: ['profile', 'import'],
  args: ['<dir>'],
  help: 'stage-profiling:cli.import',
  options: [
    { flags: '--session <id>', key: 'session', help: 'stage-profiling:cli.session' },
    { flags: '--store', key: 'store', help: 'stage-profiling:cli.store' },
  ],
  async run(args, o, call, show, ctx) {
    const abs = resolve(args[0]!);
    let r: ProfileResult;
    if (o.session !== undefined || o.store) {
      const started = await call('profiling.import', { dir: abs, sessionId: sessionOf(o) });
      await ctx.wait(started.jobId);
      r = await call('profiling.get', { stageRunId: started.stageRunId });
      ctx.note(say(show, 'stored', { session: started.sessionId, run: started.stageRunId }));
    } else r = await importProfile(abs);
    return done(r, show, ctx, !!o.json);
  },
};

/**
 * `amw profile gather HOST[,HOST…] DIR [--session ID] [--json]`: every host's DIR (the rank
 * folders that node wrote) over SFTP into the data dir, read as one import; a missing rank or a
 * host that gave nothing is a warning.
 */
const gatherCommand: StageCommand = {
  path: ['profile', 'gather'],
  args: ['<hosts>', '<dir>'],
  help: 'stage-profiling:cli.gather',
  hostAccess: true,
  options: [
    { flags: '--session <id>', key: 'session', help: 'stage-profiling:cli.session' },
    { flags: '--ranks <n>', key: 'ranks', help: 'stage-profiling:cli.ranks' },
  ],
  async run(args, o, call, show, ctx) {
    const password = await ctx.password();
    const worldSize = o.ranks === undefined ? undefined : Number(o.ranks);
    const started = await call('profiling.gather', {
      hosts: hostList(args[0]!),
      dir: args[1]!,
      sessionId: sessionOf(o),
      password,
      worldSize,
    });
    await ctx.wait(started.jobId, !o.json);
    ctx.note(say(show, 'stored', { session: started.sessionId, run: started.stageRunId }));
    const r = await call('profiling.get', { stageRunId: started.stageRunId });
    return done(r, show, ctx, !!o.json);
  },
};

/** `amw profile compare A B [--json]`: A and B are folders or stored profiling runs (their ids). */
const compareCommand: StageCommand = {
  path: ['profile', 'compare'],
  args: ['<a>', '<b>'],
  help: 'stage-profiling:cli.compare',
  options: [],
  async run(args, _o, call, show) {
    const isDir = (x: string) => existsSync(x) && statSync(x).isDirectory();
    const load = (x: string) =>
      isDir(x) ? importProfile(resolve(x)) : call('profiling.get', { stageRunId: Number(x) });
    // both checked before anything is read, so a bad second argument costs no import
    const [a, b] = [args[0]!, args[1]!];
    for (const x of [a, b])
      if (!isDir(x) && !(Number.isInteger(Number(x)) && Number(x) > 0))
        throw new AmwError('NOT_FOUND', msg('errors.text.notFolderNorRun', { arg: x }), {
          arg: x,
        });
    const cmp = compareProfiles(await load(a), await load(b));
    return { json: cmp, text: compareText(cmp, show), status: 'ok' };
  },
};

/** A line of the text output, in the CLI's language. */
const say = (show: Show, key: string, params?: Record<string, string | number>) =>
  show(m(`cli.out.${key}`, params));

function compareText(cmp: ProfileCompare, show: Show): string {
  const side = (name: string, x: ProfileCompare['a']) =>
    say(show, 'side', { side: name, source: x.source, kind: x.kind, us: us(x.stepUs) });
  const out: string[] = [side('a', cmp.a), side('b', cmp.b)];
  if (cmp.stepRatio !== null) out.push(say(show, 'ratio', { ratio: cmp.stepRatio.toFixed(3) }));
  for (const c of cmp.categories)
    out.push(`  ${c.name.padEnd(28)} ${us(c.aUs).padStart(14)} ${us(c.bUs).padStart(14)}`);
  for (const row of cmp.byOpType.slice(0, 20))
    out.push(
      `  ${row.name.slice(0, 40).padEnd(40)} ${us(row.aUs).padStart(12)} ${us(row.bUs).padStart(12)} ${row.ratio === null ? '' : `×${row.ratio.toFixed(2)}`}`,
    );
  out.push(
    say(show, 'adviceDiff', {
      fixed: cmp.advice.fixed.join(', ') || '-',
      added: cmp.advice.added.join(', ') || '-',
    }),
  );
  return `${out.join('\n')}\n`;
}

/** The document and the text of a profile; warnings go to stderr in the text form. */
function done(r: ProfileResult, show: Show, ctx: { note(line: string): void }, asJson: boolean) {
  const out: string[] = [
    show(m('report.run', { source: r.source, kind: r.kind, ranks: r.ranks.length })),
  ];
  for (const s of r.steps)
    out.push(
      `  ${say(show, 'step', {
        rank: s.rank ?? '?',
        step: s.step ?? '?',
        computing: us(s.computingUs),
        communication: us(s.communicationNotOverlappedUs),
        overlapped: us(s.overlappedUs),
        free: us(s.freeUs),
        bubble: us(s.bubbleUs),
      })}`,
    );
  if (r.kernels) {
    out.push(say(show, 'kernels', { count: r.kernels.count, us: us(r.kernels.totalUs) }));
    for (const [tt, v] of Object.entries(r.kernels.byTaskType))
      out.push(`  ${tt.padEnd(16)} ${us(v.us).padStart(14)} µs ${pc(v.share).padStart(7)}`);
    out.push(say(show, 'top'));
    for (const x of r.kernels.top)
      out.push(`  ${us(x.us).padStart(12)} µs ×${x.count}  ${x.taskType}  ${x.name}`);
  }
  for (const a of r.advice) {
    out.push(`[${a.severity}] ${a.id}: ${show(a.message)}`);
    out.push(`    → ${show(a.suggestion)}`);
  }
  // the document carries the warnings; the text form says them on stderr
  if (!asJson)
    for (const w of r.warnings)
      ctx.note(
        say(show, 'warning', {
          where: `${w.file}${w.line ? `:${w.line}` : ''}`,
          message: show(w.message),
        }),
      );
  return { json: profileDocument(r, show), text: `${out.join('\n')}\n`, status: 'ok' };
}

export const profilingCommands: StageCommand[] = [importCommand, gatherCommand, compareCommand];
