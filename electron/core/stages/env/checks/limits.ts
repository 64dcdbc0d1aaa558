import type { Msg } from '../../../../../shared/api/text';
import { clauses, m, verdict, type EnvCheck } from './text';

const GB = 1024;

export const limits: EnvCheck = {
  id: 'env.limits',
  title: m('limits.title'),
  evaluate(f, k) {
    const min = k.envLimits;
    const inv = f.inventory;
    const issues: Msg[] = [];
    const nofile = f.limits?.nofile[0];
    if (nofile !== undefined && nofile !== -1 && nofile < min.nofileMin)
      issues.push(m('limits.nofile', { value: nofile, min: min.nofileMin }));
    const memlock = f.limits?.memlock[0];
    if (memlock !== undefined && memlock !== -1 && memlock < min.memlockMinBytes)
      issues.push(m('limits.memlock', { kb: Math.round(memlock / 1024) }));
    for (const d of inv.disks)
      if (d.freeMB < min.diskFreeMinGB * GB)
        issues.push(m('limits.disk', { gb: (d.freeMB / GB).toFixed(1), mount: d.mount }));
    if (inv.memoryMB !== null && inv.memoryMB < min.memoryMinGB * GB)
      issues.push(m('limits.memory', { gb: (inv.memoryMB / GB).toFixed(0) }));
    const evidence = { limits: f.limits, disks: inv.disks, memoryMB: inv.memoryMB };
    if (!issues.length) return verdict('pass', m('limits.ok'), evidence);
    return verdict(
      'warn',
      m('limits.issues', { issues: clauses(issues) }),
      evidence,
      m('limits.fix', { nofile: min.nofileMin }),
    );
  },
};
