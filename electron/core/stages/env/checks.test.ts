import { en, zh } from '../../../../tests/support/text';
import { tempDir } from '../../../../tests/support/temp';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckOutcome, Inventory } from '../../../../shared/api';
import { isMsg } from '../../../../shared/api/text';
import { openStore } from '../../db/open';
import { loadKnowledge } from '../../knowledge/load';
import { parseNpuSmiInfo } from '../../parsers/npu-smi';
import { SessionRepository } from '../../sessions/repository';
import { evaluateChecks } from '../checks';
import {
  deviceNodes,
  driverCann,
  ENV_CHECKS,
  limits,
  npuHealth,
  pythonPackages,
  versionMatrix,
  visibleDevices,
} from './checks';
import type { EnvFacts } from './facts';
import { judgeTorchNpuCann } from './versions';

const k = loadKnowledge();

/** Facts as the probe would report them for an 8×910B4 host (npu-smi from a real sample). */
function facts(
  over: {
    versions?: Partial<Inventory['versions']>;
    env?: Record<string, string>;
    npuSmi?: string;
    dists?: Record<string, string>;
    access?: EnvFacts['deviceAccess'];
  } = {},
): EnvFacts {
  const npu = parseNpuSmiInfo(
    readFileSync(
      join(__dirname, '../../../../tests/fixtures/npu-smi', over.npuSmi ?? 'info-s3.txt'),
      'utf8',
    ),
  );
  const inventory: Inventory = {
    host: 'h',
    takenAt: '2026-01-01T00:00:00Z',
    os: 'EulerOS',
    kernel: 'Linux 5.10',
    arch: 'aarch64',
    hostname: 'h',
    cpu: { model: 'Kunpeng 920', cores: 192 },
    memoryMB: 1536 * 1024,
    memoryAvailableMB: 1400 * 1024,
    disks: [{ mount: '/home', freeMB: 500 * 1024, totalMB: 1000 * 1024 }],
    npu: {
      smiVersion: npu.smiVersion,
      devices: npu.devices,
      processes: npu.processes,
      error: npu.error,
      warnings: npu.warnings,
    },
    versions: {
      cann: '8.1.RC1',
      driver: '25.0.rc1.1',
      firmware: '7.7.0.1.231',
      python: '3.10.14',
      torch: '2.1.0',
      torchNpu: '2.1.0.post12',
      ...over.versions,
    },
    env: over.env ?? {},
    envSourcedByDefault: true,
    setEnvPath: '/usr/local/Ascend/ascend-toolkit/set_env.sh',
    devices: [],
    notes: [],
    warnings: [],
  };
  const access =
    over.access ??
    [
      ...Array.from({ length: 8 }, (_, i) => `/dev/davinci${i}`),
      '/dev/davinci_manager',
      '/dev/devmm_svm',
      '/dev/hisi_hdc',
    ].map((path) => ({ path, read: true, write: true }));
  return {
    inventory,
    rcLines: [],
    deviceAccess: access,
    groups: ['HwHiAiUser'],
    limits: { nofile: [1048576, 1048576], memlock: [-1, -1] },
    dists: over.dists ?? {},
    importTest: null,
    opTest: null,
    gaps: [],
  };
}

describe('env.version-matrix', () => {
  it('passes an official combination', () => {
    expect(versionMatrix.evaluate(facts(), k).status).toBe('pass');
  });
  it('warns on a documented cross-version pairing (TorchNPU 7.0 on CANN 8.2.RC1)', () => {
    const r = versionMatrix.evaluate(facts({ versions: { cann: '8.2.RC1' } }), k);
    expect(r.status).toBe('warn');
    expect(judgeTorchNpuCann(k, '2.1.0.post12', '8.2.RC1').kind).toBe('compatible');
  });
  it('fails a Python the torch release does not support', () => {
    const r = versionMatrix.evaluate(facts({ versions: { python: '3.12.1' } }), k);
    expect(r.status).toBe('fail');
    expect(en(r.summary)).toContain('Python 3.12 is not supported by torch 2.1.0');
  });
  it('suggests the install line when torch_npu is missing', () => {
    const r = versionMatrix.evaluate(facts({ versions: { torchNpu: null } }), k);
    expect(r.status).toBe('fail');
    expect(en(r.remediation)).toBe(
      'pip install torch==2.1.0 torch-npu==2.1.0.post12  (pairs with CANN 8.1.RC1)',
    );
  });
  it('does not trust a local build tag or case', () => {
    expect(
      versionMatrix.evaluate(facts({ versions: { torch: '2.1.0+cpu', cann: '8.1.rc1' } }), k)
        .status,
    ).toBe('pass');
  });
});

describe('other env checks on constructed facts', () => {
  it('driver-cann: listed, unlisted, no data', () => {
    expect(driverCann.evaluate(facts(), k).status).toBe('pass');
    expect(driverCann.evaluate(facts({ versions: { driver: '24.1.rc2' } }), k).status).toBe('warn');
    expect(driverCann.evaluate(facts({ versions: { cann: '7.0.0' } }), k).status).toBe('skip');
  });
  it('device-nodes: a node the user cannot open fails with the usermod line', () => {
    const denied = facts({
      access: [
        { path: '/dev/davinci0', read: false, write: false },
        { path: '/dev/davinci_manager', read: true, write: true },
        { path: '/dev/devmm_svm', read: true, write: true },
        { path: '/dev/hisi_hdc', read: true, write: true },
      ],
    });
    const r = deviceNodes.evaluate(denied, k);
    expect(r.status).toBe('fail');
    expect(en(r.remediation)).toContain('usermod -aG HwHiAiUser');
  });
  it('npu-health: several processes on one card are listed with PIDs and memory', () => {
    const r = npuHealth.evaluate(facts({ npuSmi: 'info-s2.txt' }), k);
    expect(r.status).toBe('warn');
    expect(en(r.summary)).toContain('pid 14247 vllm 115 MB');
  });
  it('visible-devices: ids beyond the chips present fail', () => {
    expect(
      visibleDevices.evaluate(facts({ env: { ASCEND_RT_VISIBLE_DEVICES: '0,1' } }), k).status,
    ).toBe('pass');
    expect(
      visibleDevices.evaluate(facts({ env: { ASCEND_RT_VISIBLE_DEVICES: '0,9' } }), k).status,
    ).toBe('fail');
    expect(
      visibleDevices.evaluate(facts({ env: { ASCEND_VISIBLE_DEVICES: 'all' } }), k).status,
    ).toBe('fail');
  });
  it('python-packages: flash-attn fails with its replacement; triton is fine next to triton-ascend', () => {
    const r = pythonPackages.evaluate(
      facts({ dists: { 'flash-attn': '2.5.8', numpy: '1.26.4' } }),
      k,
    );
    expect(r.status).toBe('fail');
    expect(en(r.remediation)).toContain('npu_fusion_attention');
    expect(
      pythonPackages.evaluate(facts({ dists: { triton: '3.2.0', 'triton-ascend': '3.2.0' } }), k)
        .status,
    ).toBe('pass');
    expect(pythonPackages.evaluate(facts({ dists: { triton: '3.2.0' } }), k).status).toBe('warn');
    expect(pythonPackages.evaluate(facts({ dists: { deepspeed: '0.14.0' } }), k).status).toBe(
      'warn',
    );
    expect(
      pythonPackages.evaluate(
        facts({ dists: { deepspeed: '0.14.0', 'deepspeed-npu-accelerator': '0.14.0' } }),
        k,
      ).status,
    ).toBe('pass');
  });
  it('limits: a big training box passes; 1024 open files warns', () => {
    expect(limits.evaluate(facts(), k).status).toBe('pass');
    const low = facts();
    low.limits = { nofile: [1024, 4096], memlock: [-1, -1] };
    expect(en(limits.evaluate(low, k).summary)).toContain('open files limit 1024 < 65536');
  });
});

/** Facts that take most checks down a branch other than `pass`. */
function troubled(): EnvFacts {
  const f = facts({
    versions: { python: '3.12.1', driver: '24.1.rc2' },
    env: { ASCEND_RT_VISIBLE_DEVICES: '0,9' },
    npuSmi: 'info-s2.txt',
    dists: { 'flash-attn': '2.5.8', deepspeed: '0.14.0' },
  });
  f.limits = { nofile: [1024, 4096], memlock: [-1, -1] };
  f.inventory.envSourcedByDefault = false;
  f.importTest = {
    rc: 1,
    log: '',
    result: { ok: false, error: "ModuleNotFoundError: No module named 'torch_npu'" },
  };
  f.opTest = { rc: 1, log: '', result: { error: 'x' } };
  return f;
}

/** torch and torch_npu import and see 8 NPUs. */
const importedOk = (): EnvFacts['importTest'] => ({
  rc: 0,
  log: '',
  result: {
    ok: true,
    available: true,
    count: 8,
    name: 'Ascend910B4',
    torch: '2.1.0',
    torch_npu: '2.1.0.post12',
  },
});

const texts = (c: CheckOutcome) => [c.title, c.summary, c.remediation].filter((t) => t !== null);

describe('env texts are messages, read in the language chosen when shown', () => {
  it('a result stored once shows in English and in 中文 from the same stored value', () => {
    const { db } = openStore(join(tempDir(), 'amw.db'));
    try {
      const sessions = new SessionRepository(db);
      const sessionId = sessions.createSession({ title: 'switch languages', host: 'h' });
      const runId = sessions.startRun(sessionId, 'env', {
        hostId: null,
        target: 'h',
        addHosts: ['h'],
      });
      sessions.finishRun(runId, 'fail', evaluateChecks(ENV_CHECKS, troubled(), k));
      const stored = sessions.run(runId).checks;
      const check = (id: string) => stored.find((c) => c.id === id)!;

      const vm = check('env.version-matrix');
      expect(en(vm.title)).toBe('CANN × torch × torch_npu × Python match the official matrix');
      expect(zh(vm.title)).toBe('CANN × torch × torch_npu × Python 与官方版本矩阵一致');
      expect(en(vm.summary)).toBe(
        'Python 3.12 is not supported by torch 2.1.0 (supported: 3.8, 3.9, 3.10, 3.11).',
      );
      expect(zh(vm.summary)).toBe('torch 2.1.0 不支持 Python 3.12（支持：3.8、3.9、3.10、3.11）。');
      // clauses are joined each language's way
      expect(en(check('env.limits').summary)).toBe('open files limit 1024 < 65536.');
      expect(zh(check('env.limits').summary)).toBe('打开文件数上限 1024 < 65536。');
      // plurals, and texts that live in knowledge files (python-packages.json, import-causes.json)
      expect(en(check('env.device-nodes').summary)).toBe(
        '8 chip nodes and the management nodes are usable.',
      );
      const pk = check('env.python-packages');
      expect(en(pk.remediation)).toContain(
        'flash-attn: Replace with torch_npu.npu_fusion_attention',
      );
      expect(zh(pk.remediation)).toContain('flash-attn：训练改用 torch_npu.npu_fusion_attention');
      const imp = check('env.torch-npu-import');
      expect(zh(imp.summary)).toBe(
        "ModuleNotFoundError: No module named 'torch_npu' —— 当前 Python 未安装 torch_npu。",
      );
      // the remedy says what to do, not the summary's meaning again
      expect(en(imp.remediation)).toMatch(
        /^Install the torch_npu wheel that pairs with this torch/,
      );
      expect(en(imp.summary)).not.toContain(en(imp.remediation));

      for (const c of stored) {
        for (const t of texts(c)) {
          expect(isMsg(t), c.id).toBe(true);
          // nothing of either language's wording is stored: only keys and the host's facts
          expect(JSON.stringify(t), c.id).not.toMatch(/[\u4e00-\u9fff]/);
          expect(en(t), c.id).not.toBe(zh(t));
        }
      }
    } finally {
      db.close();
    }
  });

  it('every branch names keys that exist in both languages', () => {
    const variants: EnvFacts[] = [facts(), troubled()];
    const bare = facts({
      versions: { cann: null, driver: null, torchNpu: null, torch: null, python: null },
      access: [],
    });
    bare.inventory.npu = null;
    bare.inventory.setEnvPath = null;
    variants.push(bare);
    const alarm = facts({ npuSmi: 'info-alarm.txt', env: { ASCEND_VISIBLE_DEVICES: 'all' } });
    alarm.opTest = {
      rc: 0,
      log: "The operator 'aten::nonzero' is not currently supported on the NPU backend and will fall back to run on the CPU",
      result: { ok: true, value: 128, device: 'npu:0', seconds: 0.4 },
    };
    alarm.importTest = importedOk();
    alarm.inventory.memoryMB = 24 * 1024;
    alarm.inventory.disks = [{ mount: '/', freeMB: 5000, totalMB: 100_000 }];
    variants.push(alarm);
    const summaries = new Set<string>();
    for (const f of variants) {
      for (const c of evaluateChecks(ENV_CHECKS, f, k)) {
        if (isMsg(c.summary)) summaries.add(c.summary.key);
        for (const t of texts(c))
          for (const s of [en(t), zh(t)])
            expect(s, `${c.id}: ${s}`).not.toMatch(/stage-env:|knowledge:|\{\{|^$/);
      }
    }
    expect(summaries.size).toBeGreaterThanOrEqual(25); // the variants take different branches
  });

  it('a right answer computed on the CPU does not pass as the NPU computing', () => {
    const f = facts();
    f.importTest = importedOk();
    const run = (device: string) => {
      f.opTest = { rc: 0, log: '', result: { ok: true, value: 128, device, seconds: 0.01 } };
      return evaluateChecks(ENV_CHECKS, f, k).find((x) => x.id === 'env.npu-op-runs')!;
    };
    const cpu = run('cpu');
    expect(cpu.status).toBe('fail');
    expect(en(cpu.summary)).toContain('computed on cpu, not on an NPU');
    expect(zh(cpu.summary)).toContain('在 cpu 上而不是在 NPU 上算出的');
    expect(en(cpu.remediation!)).toContain('print(torch.randn(2).npu().device)');
    expect(run('npu:0').status).toBe('pass');
    expect(run('npu:3').status).toBe('pass');
  });

  it('a failed NPU computation with a known cause: the meaning in the summary, the fix as the remedy', () => {
    const f = facts();
    f.importTest = importedOk();
    for (const result of [{ error: 'RuntimeError: EE1001 device open failed' }, null]) {
      f.opTest = { rc: 1, log: 'EE1001: [PID: 9] device 0 open failed', result };
      const c = evaluateChecks(ENV_CHECKS, f, k).find((x) => x.id === 'env.npu-op-runs')!;
      expect(c.status).toBe('fail');
      expect(en(c.summary)).toContain('in use by another process or container');
      expect(en(c.remediation!)).toContain('npu-smi info');
    }
  });
});
