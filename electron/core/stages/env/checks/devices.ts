import type { Msg } from '../../../../../shared/api/text';
import { clauses, list, m, verdict, type EnvCheck } from './text';

export const deviceNodes: EnvCheck = {
  id: 'env.device-nodes',
  title: m('deviceNodes.title'),
  evaluate(f) {
    const evidence = { nodes: f.deviceAccess, groups: f.groups };
    const chips = f.deviceAccess.filter((d) => /\/davinci\d+$/.test(d.path));
    const mgmt = ['/dev/davinci_manager', '/dev/devmm_svm', '/dev/hisi_hdc'];
    if (!f.inventory.versions.driver && !chips.length)
      return verdict('skip', m('deviceNodes.noDriver'), evidence);
    const missing = mgmt.filter((p) => !f.deviceAccess.some((d) => d.path === p));
    if (!chips.length) missing.unshift('/dev/davinciN');
    const denied = f.deviceAccess.filter((d) => !d.read || !d.write).map((d) => d.path);
    if (missing.length)
      return verdict(
        'fail',
        m('deviceNodes.missing', { nodes: missing }),
        evidence,
        m('deviceNodes.missingFix'),
      );
    if (denied.length)
      return verdict(
        'fail',
        m('deviceNodes.denied', { nodes: denied }),
        evidence,
        m('deviceNodes.deniedFix'),
      );
    return verdict('pass', m('deviceNodes.usable', { count: chips.length }), evidence);
  },
};

export const npuHealth: EnvCheck = {
  id: 'env.npu-health',
  title: m('npuHealth.title'),
  evaluate(f) {
    const npu = f.inventory.npu;
    if (!npu) return verdict('skip', m('npuHealth.noSmi'), null);
    const evidence = {
      devices: npu.devices.map((d) => ({ npu: d.npu, chip: d.chip, health: d.health })),
      processes: npu.processes,
    };
    if (npu.error)
      return verdict(
        'fail',
        npu.error.meaning
          ? m('npuHealth.smiFailedMeaning', {
              message: npu.error.message,
              meaning: npu.error.meaning,
            })
          : m('npuHealth.smiFailed', { message: npu.error.message }),
        { ...evidence, error: npu.error },
        m('npuHealth.smiFailedFix'),
      );
    const bad = npu.devices.filter((d) => d.health === 'Alarm' || d.health === 'Critical');
    const warn = npu.devices.filter(
      (d) => d.health === 'Warning' || d.health === 'UNKNOWN' || d.health === null,
    );
    const name = (d: { npu: number; chip: number }) => `NPU ${d.npu}.${d.chip}`;
    // npu-smi's own words (health, process name): the same in every language
    const busy = npu.processes.map(
      (p) =>
        `${name({ npu: p.npu, chip: p.chip ?? 0 })}: pid ${p.pid} ${p.name || '?'} ${p.memMB ?? '?'} MB`,
    );
    /** The chips, then what holds them, as one sentence. */
    const state = (chips: (string | Msg)[]): Msg =>
      !chips.length
        ? m('npuHealth.busy', { busy: clauses(busy) })
        : busy.length
          ? m('npuHealth.chipsBusy', { chips: list(chips), busy: clauses(busy) })
          : m('npuHealth.chips', { chips: list(chips) });
    if (bad.length)
      return verdict(
        'fail',
        state(bad.map((d) => `${name(d)} ${d.health}`)),
        evidence,
        m('npuHealth.alarmFix'),
      );
    if (warn.length || busy.length)
      return verdict(
        'warn',
        state(
          warn.map((d) =>
            d.health === null
              ? m('npuHealth.unknown', { chip: name(d) })
              : `${name(d)} ${d.health}`,
          ),
        ),
        evidence,
        m('npuHealth.busyFix'),
      );
    return verdict('pass', m('npuHealth.ok', { count: npu.devices.length }), evidence);
  },
};

const VISIBLE_VARS = ['ASCEND_VISIBLE_DEVICES', 'ASCEND_RT_VISIBLE_DEVICES'];

export const visibleDevices: EnvCheck = {
  id: 'env.visible-devices',
  title: m('visibleDevices.title'),
  evaluate(f) {
    const env = f.inventory.env;
    const vars = VISIBLE_VARS.filter((k) => env[k] !== undefined);
    const present = f.deviceAccess
      .map((d) => /\/davinci(\d+)$/.exec(d.path)?.[1])
      .filter((x): x is string => !!x)
      .map(Number);
    const evidence = { vars: Object.fromEntries(vars.map((k) => [k, env[k]])), present };
    if (!vars.length) return verdict('pass', m('visibleDevices.unset'), evidence);
    const problems: Msg[] = [];
    for (const name of vars) {
      const value = env[name]!;
      const ids = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = ids.filter((id) => !/^\d+$/.test(id));
      if (bad.length) problems.push(m('visibleDevices.notNumbers', { name, value }));
      else if (
        name === 'ASCEND_RT_VISIBLE_DEVICES' &&
        ids.some((id) => Number(id) >= Math.max(present.length, 1))
      )
        problems.push(m('visibleDevices.beyond', { name, value, count: present.length }));
      else if (name === 'ASCEND_VISIBLE_DEVICES' && ids.some((id) => !present.includes(Number(id))))
        problems.push(
          m('visibleDevices.noNode', {
            name,
            value,
            id: ids.find((id) => !present.includes(Number(id)))!,
          }),
        );
    }
    if (problems.length)
      return verdict('fail', clauses(problems), evidence, m('visibleDevices.fix'));
    return verdict(
      'pass',
      m('visibleDevices.fits', {
        vars: vars.map((k) => `${k}=${env[k]}`),
        count: present.length,
      }),
      evidence,
    );
  },
};
