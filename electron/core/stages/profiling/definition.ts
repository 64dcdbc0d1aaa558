import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { profilingStage } from '../../../../shared/stages/profiling';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import { nowIso } from '../../db/open';
import { decodeProbe, parseInventory } from '../../hosts/inventory-parse';
import { resourcesDir } from '../../paths';
import { defineStage, type StageRun, type StageServices } from '../define';
import { profilingAdvice } from './advice';
import { profilingCli } from './cli';
import { m } from './csv-stream';
import { gatherFolder } from './gather';
import { profilingHandlers } from './handlers';
import { importProfile } from './import';
import { profilingOutcomes, PROFILING_CHECK_IDS, projectStepMs } from './outcomes';
import { profilingReport } from './report';
import { ProfileRepository } from './repository';
import { addCompleteness, failureText } from './completeness';

const MARKER = '@@AMW-PROFILE@@';

interface HarnessResult {
  out: string;
  steps: number[];
  profiler: string | null;
  device: string;
  torch?: string;
  torchNpu?: string | null;
  notes: string[];
  /** Several ranks per node: the global ranks that wrote a result, those that did not, and how. */
  ranks?: number[];
  missingRanks?: number[];
  launcher?: { tool: 'torchrun'; nprocPerNode: number; rc: number; backend: string };
  error: { type: string; message: string; traceback: string } | null;
}

function readHarness(text: string): HarnessResult {
  const at = text.lastIndexOf(MARKER);
  if (at < 0)
    throw new AmwError(
      'PROBE_FAILED',
      msg('errors.text.profilingNoResult', { output: text.slice(-600) || '—' }),
    );
  try {
    return JSON.parse(text.slice(at + MARKER.length).split('\n')[0]!) as HarnessResult;
  } catch {
    throw new AmwError('PROBE_FAILED', msg('errors.text.profilingNotJson'));
  }
}

/**
 * The profiling stage on one host or several at once (`amw run a,b --stage profiling`): on each,
 * the entry runs for N steps under torch_npu.profiler (or torch.profiler on a host without an NPU,
 * said so in the evidence), every node's output folder comes back over SFTP (sha256 checked, kept
 * under <data dir>/profiles/<run>/<host>), and they are read as one profile with the same parsers
 * as `amw profile import`; a node that gave nothing is named in the warnings.
 */
export const profilingDefinition = defineStage({
  shared: profilingStage,
  merge: 'replace',
  report: profilingReport,
  cli: profilingCli,
  handlers: profilingHandlers,
  // the host each gathered file came from
  hostColumns: [
    { table: 'profile_files', column: 'host', runColumn: 'stage_run_id', scope: 'runs' },
  ],
  knowledge: () => ({ profilingAdvice: profilingAdvice().rules.map((r) => r.id) }),
  prepare(input, services) {
    if (!input.entry === !input.script)
      throw new AmwError('VALIDATION', 'The profiling stage needs either an entry or a script.', {
        issues: [{ path: 'entry', message: 'stage-profiling:needsEntry' }],
      });
    if (input.baseline) new ProfileRepository(services.db, services.artifacts).get(input.baseline);
    if (input.checks?.length) {
      const unknown = input.checks.filter((c) => !(PROFILING_CHECK_IDS as string[]).includes(c));
      if (unknown.length)
        throw new AmwError('VALIDATION', msg('errors.text.noSuchChecks', { checks: unknown }), {
          unknown,
        });
    }
    return input;
  },
  async run({ input, hosts, runId, sessionId, job, services }) {
    const steps = input.steps ?? 5;
    const args = {
      ...(input.script ? { script: input.script } : { entry: input.entry }),
      steps,
      level: input.level ?? 'Level1',
      backward: !!input.backward,
      activities: input.activities ?? ['cpu', 'npu'],
      nproc: input.ranksPerHost ?? 1,
    };
    const runDir = join(services.artifacts.dataDir, 'profiles', String(runId));
    // every host at once (a rank per node); each host's output lands in <run>/<host>
    const settled = await Promise.allSettled(
      hosts.map((name, node) =>
        profileOn(name, { ...args, node }, runId, runDir, input.password, job, services),
      ),
    );
    job.throwIfCancelled();
    const done = settled.flatMap((x, i) =>
      x.status === 'fulfilled' ? [{ host: hosts[i]!, ...x.value }] : [],
    );
    // no host answered: the run ends as the first failure says (interrupted, error…)
    if (!done.length) throw (settled[0] as PromiseRejectedResult).reason;
    const repo = new ProfileRepository(services.db, services.artifacts);
    const rules = profilingAdvice();
    const entry = input.script ?? input.entry ?? '';
    const baseline = input.baseline ? repo.get(input.baseline) : null;
    const failedRun = done.find((d) => d.harness.error);
    const facts = {
      error: failedRun ? failedRun.harness.error : null,
      profiler: done[0]!.harness.profiler,
      entry,
      host: failedRun?.host ?? hosts.join(','),
      steps,
      baseline,
      projectStepMs: baseline ? null : projectStepMs(services.sessions, sessionId),
      targetRatio: input.targetRatio ?? null,
    };
    const pick = (outcomes: ReturnType<typeof profilingOutcomes>) => ({
      outcomes: input.checks?.length
        ? outcomes.filter((o) => input.checks!.includes(o.id))
        : outcomes,
    });
    // the user's code failed: its traceback is the evidence, there is nothing to gather
    if (failedRun) return pick(profilingOutcomes({ ...facts, result: null }, rules));
    job.progress(0.8, { key: 'evaluating', params: { host: hosts.join(',') } });
    const one = hosts.length === 1;
    const result = await importProfile(one ? done[0]!.local : runDir, {
      signal: job.signal,
      rules,
    });
    result.source = done.map((d) => `${d.host}:${d.harness.out}`).join(',');
    const failures = settled.flatMap((x, i) =>
      x.status === 'rejected' ? [{ host: hosts[i]!, error: failureText(x.reason) }] : [],
    );
    // torchrun on every node: every rank of every node is expected (nodes alike, as torchrun has it)
    const perNode = done.find((d) => d.harness.launcher)?.harness.launcher?.nprocPerNode;
    addCompleteness(result, hosts, failures, {
      perHostFolders: !one,
      ...(perNode ? { worldSize: perNode * hosts.length } : {}),
    });
    result.warnings.unshift(...launchNotes(done));
    const profiler = done[0]!.harness.profiler;
    if (profiler && profiler !== 'torch_npu.profiler')
      result.warnings.unshift({ file: '.', line: null, message: m('warn.standIn') });
    // the harness's own wall-clock step times stand in where the profile has none
    if (!result.stepTimes.length)
      result.stepTimes = done.flatMap((d) =>
        d.harness.steps.map((s, i) => ({ rank: null, step: i + 1, us: s * 1e6 })),
      );
    repo.save(runId, result, {
      entry,
      profiler,
      filesDir: one ? done[0]!.local : runDir,
      files: done.flatMap((d) => d.files),
    });
    return pick(profilingOutcomes({ ...facts, result }, rules));
  },
});

/** What torchrun did on each node (said so: gloo on a CPU host), and ranks that gave no result. */
function launchNotes(done: { host: string; harness: HarnessResult }[]) {
  return done.flatMap(({ host, harness: h }) => {
    if (!h.launcher) return [];
    const l = h.launcher;
    const notes = [
      {
        file: host,
        line: null,
        message: m('warn.torchrun', {
          host,
          ranks: (h.ranks ?? []).join(', ') || '—',
          n: l.nprocPerNode,
          backend: l.backend,
        }),
      },
    ];
    if (l.backend === 'gloo')
      notes.push({ file: host, line: null, message: m('warn.gloo', { host }) });
    if (h.missingRanks?.length)
      notes.push({
        file: host,
        line: null,
        message: m('warn.rankNoResult', { host, ranks: h.missingRanks.join(', ') }),
      });
    return notes;
  });
}

/**
 * One node of the run: the harness under the profiler, then its output folder over SFTP into
 * <run>/<host> (sha256 checked, resumable). A failure of the user's code comes back as the
 * harness's error, with nothing gathered; a connection that fails throws.
 */
async function profileOn(
  name: string,
  args: Record<string, unknown>,
  runId: number,
  runDir: string,
  password: string | undefined,
  job: StageRun<unknown>['job'],
  services: StageServices,
) {
  const remote = `.amw/profiles/run-${runId}-${Date.now()}`;
  const res = await services.hosts.runProbe(
    name,
    {
      name: 'profile',
      parts: ['inventory', 'profile'],
      timeoutMs: 3_700_000,
      inject: {
        AMW_PROFILE_ARGS: JSON.stringify({ ...args, out: `~/${remote}` }),
        PROFILE_HARNESS: readFileSync(join(resourcesDir(), 'probes', 'profile_run.py'), 'utf8'),
      },
    },
    job,
    password,
  );
  job.throwIfCancelled();
  const sections = decodeProbe(res.stdout, 'profile');
  services.hosts.saveInventory(name, parseInventory(res.stdout, name, nowIso()), res.stdout);
  const section = sections.profile_run;
  if (!section)
    throw new AmwError('PROBE_FAILED', msg('errors.text.noPythonProfiling', { host: name }), {
      host: name,
    });
  const harness = readHarness(section.out);
  const local = join(runDir, name);
  if (harness.error) return { harness, local, files: [] };
  job.progress(0.6, { key: 'connecting', params: { host: name } });
  rmSync(local, { recursive: true, force: true });
  const files = await gatherFolder(services.hosts, name, harness.out, local, {
    password,
    signal: job.signal,
  });
  return { harness, local, files };
}
