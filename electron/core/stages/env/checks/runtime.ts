import type { Msg } from '../../../../../shared/api/text';
import { importCauseText } from '../../../knowledge/keys';
import type { Knowledge } from '../../../knowledge/load';
import type { EnvFacts } from '../facts';
import { clauses, list, m, verdict, type EnvCheck } from './text';

const SET_ENV_DEFAULT = '/usr/local/Ascend/ascend-toolkit/set_env.sh';
const REQUIRED_VARS = ['ASCEND_TOOLKIT_HOME', 'ASCEND_OPP_PATH', 'LD_LIBRARY_PATH'];

export const setEnv: EnvCheck = {
  id: 'env.set-env',
  title: m('setEnv.title'),
  evaluate(f) {
    const inv = f.inventory;
    const evidence = {
      setEnvPath: inv.setEnvPath,
      sourcedByDefault: inv.envSourcedByDefault,
      after: inv.env,
      rcLines: f.rcLines,
    };
    if (!inv.versions.cann && !inv.setEnvPath) return verdict('skip', m('setEnv.noCann'), evidence);
    if (!inv.setEnvPath)
      return verdict('fail', m('setEnv.noScript'), evidence, m('setEnv.noScriptFix'));
    const missing = REQUIRED_VARS.filter((k) => !inv.env[k]);
    const ld = inv.env.LD_LIBRARY_PATH ?? '';
    const problems = [
      ...missing.map((name) => m('setEnv.unset', { name })),
      ...(ld.includes('lib64') ? [] : [m('setEnv.ldNoLib64')]),
      ...(ld.includes('/driver') ? [] : [m('setEnv.ldNoDriver')]),
    ];
    if (problems.length) {
      return verdict(
        'fail',
        m('setEnv.broken', { script: inv.setEnvPath, problems: clauses(problems) }),
        evidence,
        m('setEnv.brokenFix'),
      );
    }
    const line = `source ${inv.setEnvPath ?? SET_ENV_DEFAULT}`;
    if (!inv.envSourcedByDefault) {
      const inBashrcAfterGuard = f.rcLines.some((l) => l.text.includes('set_env.sh'));
      return verdict(
        'warn',
        inBashrcAfterGuard ? m('setEnv.interactiveOnly') : m('setEnv.notSourced'),
        evidence,
        m('setEnv.addLine', { line }),
      );
    }
    return verdict(
      'pass',
      m('setEnv.sourced', { home: inv.env.ASCEND_TOOLKIT_HOME ?? '' }),
      evidence,
    );
  },
};

/**
 * What a failed import or computation means and what to do, from the known failure texts
 * (knowledge): the meaning goes in the summary, the fix is the remedy (the same text twice read as
 * no advice at all).
 */
function explainPython(
  run: NonNullable<EnvFacts['importTest']>,
  k: Knowledge,
): { cause: Msg; fix: Msg } | null {
  const text = `${String(run.result?.error ?? '')}\n${String(run.result?.traceback ?? '')}\n${run.log}`;
  const known = k.importCauses.find((c) => c.pattern.test(text));
  return known ? { cause: importCauseText(known.id), fix: importCauseText(known.id, 'fix') } : null;
}

export const torchNpuImport: EnvCheck = {
  id: 'env.torch-npu-import',
  title: m('torchNpuImport.title'),
  evaluate(f, k) {
    const run = f.importTest;
    if (!run || run.rc === 127)
      return verdict('fail', m('noPython'), null, m('torchNpuImport.noPythonFix'));
    if (run.rc === 124)
      return verdict('error', m('torchNpuImport.timeout', { seconds: 120 }), { log: run.log });
    const r = run.result;
    const evidence = { result: r, log: run.log.slice(-3000) };
    if (!r) return verdict('error', m('torchNpuImport.noResult', { rc: run.rc }), evidence);
    if (r.error) {
      const known = explainPython(run, k);
      const error = String(r.error);
      return verdict(
        'fail',
        known
          ? m('torchNpuImport.failedCause', { error, cause: known.cause })
          : m('torchNpuImport.failed', { error }),
        evidence,
        known?.fix ?? null,
      );
    }
    if (!r.available || !r.count)
      return verdict(
        'fail',
        m('torchNpuImport.notAvailable'),
        evidence,
        m('torchNpuImport.notAvailableFix'),
      );
    return verdict(
      'pass',
      m('torchNpuImport.ok', {
        torch: String(r.torch),
        torchNpu: String(r.torch_npu),
        chips: String(r.count),
        name: String(r.name),
      }),
      evidence,
    );
  },
};

const FALLBACK_RE =
  /The operator '([^']+)' is not currently supported on the NPU backend and will fall back to run on the CPU/g;

export const npuOpRuns: EnvCheck = {
  id: 'env.npu-op-runs',
  title: m('npuOpRuns.title'),
  evaluate(f, k) {
    const run = f.opTest;
    if (!run || run.rc === 127) return verdict('skip', m('noPython'), null);
    const r = run.result;
    const evidence = { result: r, log: run.log.slice(-3000) };
    if (run.rc === 124) return verdict('error', m('npuOpRuns.timeout', { seconds: 180 }), evidence);
    if (!r || r.error) {
      if (f.importTest?.result && !f.importTest.result.ok)
        return verdict('skip', m('npuOpRuns.skipped'), evidence);
      const known = explainPython(run, k);
      const error = r?.error != null ? String(r.error) : null;
      return verdict(
        'fail',
        error === null
          ? known
            ? m('npuOpRuns.failedExitCause', { rc: run.rc, cause: known.cause })
            : m('npuOpRuns.failedExit', { rc: run.rc })
          : known
            ? m('npuOpRuns.failedCause', { error, cause: known.cause })
            : m('npuOpRuns.failed', { error }),
        evidence,
        known?.fix ?? null,
      );
    }
    const fallbacks = [...new Set([...run.log.matchAll(FALLBACK_RE)].map((x) => x[1]!))];
    if (!r.ok) return verdict('fail', m('npuOpRuns.wrong', { value: String(r.value) }), evidence);
    // a right answer from the CPU proves nothing about the NPU: `.npu()` must have put it there
    if (!/^npu\b/.test(String(r.device)))
      return verdict(
        'fail',
        m('npuOpRuns.notOnNpu', { device: String(r.device) }),
        evidence,
        m('npuOpRuns.notOnNpuFix'),
      );
    if (fallbacks.length) {
      return verdict(
        'warn',
        m('npuOpRuns.fallback', { count: fallbacks.length, ops: list(fallbacks) }),
        { ...evidence, fallbacks },
        m('npuOpRuns.fallbackFix'),
      );
    }
    return verdict(
      'pass',
      m('npuOpRuns.ok', { device: String(r.device), seconds: String(r.seconds) }),
      evidence,
    );
  },
};
