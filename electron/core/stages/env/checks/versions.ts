import type { Msg } from '../../../../../shared/api/text';
import {
  baseRelease,
  driverMatches,
  driversFor,
  judgeTorchNpuCann,
  normCann,
  pythonsFor,
  stripLocal,
} from '../versions';
import { clauses, m, verdict, type EnvCheck } from './text';

const combo = (r: { torchNpu: string; torch: string; cann: string }) =>
  `torch_npu ${r.torchNpu} + torch ${r.torch} + CANN ${r.cann}`;

export const versionMatrix: EnvCheck = {
  id: 'env.version-matrix',
  title: m('versionMatrix.title'),
  evaluate(f, k) {
    const { cann, torch, torchNpu, python } = f.inventory.versions;
    const evidence = { cann, torch, torchNpu, python };
    if (!cann)
      return verdict('fail', m('versionMatrix.noCann'), evidence, m('versionMatrix.noCannFix'));
    if (!torchNpu) {
      const rows = k.versions.matrix.filter(
        (r) => normCann(r.cann) === normCann(cann) && r.status === 'active',
      );
      const pick =
        rows.find((r) => torch && baseRelease(r.torch) === baseRelease(torch)) ?? rows[0];
      return verdict(
        'fail',
        torch
          ? m('versionMatrix.noTorchNpuWithTorch', { cann, torch: stripLocal(torch) })
          : m('versionMatrix.noTorchNpu', { cann }),
        { ...evidence, candidates: rows.map(combo) },
        pick
          ? m('versionMatrix.install', {
              torch: pick.torch,
              torchNpu: pick.torchNpu,
              cann: pick.cann,
            })
          : m('versionMatrix.noRelease', { cann }),
      );
    }
    const problems: Msg[] = [];
    if (torch && baseRelease(torch) !== baseRelease(torchNpu)) {
      problems.push(
        m('versionMatrix.torchMismatch', {
          torch: stripLocal(torch),
          torchNpu,
          needs: baseRelease(torchNpu),
        }),
      );
    }
    const judged = judgeTorchNpuCann(k, torchNpu, cann);
    const suggest = judged.suggestions.map(combo);
    if (judged.kind === 'unknown-torch-npu')
      problems.push(m('versionMatrix.unknownTorchNpu', { torchNpu }));
    if (judged.kind === 'mismatch') {
      problems.push(
        m('versionMatrix.cannMismatch', {
          torchNpu,
          cann,
          pairs: [...new Set(judged.rows.map((r) => r.cann))],
        }),
      );
    }
    const pys = torch ? pythonsFor(k, torch) : null;
    const py = python ? python.split('.').slice(0, 2).join('.') : null;
    if (pys && py && !pys.includes(py))
      problems.push(
        m('versionMatrix.python', { python: py, torch: baseRelease(torch!), supported: pys }),
      );
    // Seed 000 §2.1: settle PyTorch first, then the torch_npu wheel for it, then the matching
    // CANN; rolling back a CANN/driver install is the expensive step.
    const order = m('versionMatrix.order');
    const remediation = suggest.length
      ? m('versionMatrix.nearest', { combos: clauses(suggest), order })
      : order;
    if (problems.length) {
      return verdict(
        'fail',
        m('sentences', { sentences: problems }),
        { ...evidence, suggestions: suggest },
        remediation,
      );
    }
    if (judged.kind === 'compatible') {
      return verdict(
        'warn',
        m('versionMatrix.crossVersion', { torchNpu, cann }),
        { ...evidence, releasedWith: judged.rows.map((r) => r.cann) },
        remediation,
      );
    }
    return verdict(
      'pass',
      m('versionMatrix.official', {
        torchNpu,
        torch: stripLocal(torch ?? '?'),
        cann,
        python: py ?? '?',
      }),
      evidence,
    );
  },
};

export const driverCann: EnvCheck = {
  id: 'env.driver-cann',
  title: m('driverCann.title'),
  evaluate(f, k) {
    const { cann, driver, firmware } = f.inventory.versions;
    const evidence = { cann, driver, firmware };
    if (!driver)
      return verdict('fail', m('driverCann.noDriver'), evidence, m('driverCann.noDriverFix'));
    if (!cann) return verdict('skip', m('driverCann.noCann'), evidence);
    const wanted = driversFor(k, cann);
    if (!wanted) return verdict('skip', m('driverCann.noTable', { cann }), evidence);
    if (wanted.some((w) => driverMatches(driver, w))) {
      return verdict('pass', m('driverCann.listed', { driver, cann }), {
        ...evidence,
        listed: wanted,
      });
    }
    return verdict(
      'warn',
      m('driverCann.unlisted', { driver, cann, listed: wanted }),
      { ...evidence, listed: wanted },
      m('driverCann.unlistedFix', { wanted: wanted[0] ?? '?', driver }),
    );
  },
};
