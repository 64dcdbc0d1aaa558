import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNpuSmiInfo } from './npu-smi';

const sample = (name: string) =>
  readFileSync(join(__dirname, '../../../tests/fixtures/npu-smi', name), 'utf8');

describe('npu-smi info on real samples', () => {
  it('S2: sparse NPU ids 3 and 6, several processes on one card', () => {
    const r = parseNpuSmiInfo(sample('info-s2.txt'));
    expect(r.smiVersion).toBe('24.1.rc3');
    expect(r.layout).toBe('hbm');
    expect(r.devices.map((d) => d.npu)).toEqual([3, 6]);
    expect(r.devices[0]).toEqual({
      npu: 3,
      chip: 0,
      name: '910B4',
      health: 'OK',
      powerW: 87.1,
      tempC: 48,
      aicorePct: 0,
      hbmUsedMB: 3034,
      hbmTotalMB: 32768,
      memUsedMB: null,
      memTotalMB: null,
      busId: '0000:02:00.0',
      phyId: null,
      logicId: null,
    });
    expect(r.processes).toEqual([
      { npu: 3, chip: 0, pid: 14414, name: 'python', memMB: 113 },
      { npu: 3, chip: 0, pid: 14247, name: 'vllm', memMB: 115 },
      { npu: 3, chip: 0, pid: 14413, name: 'python', memMB: 113 },
      { npu: 6, chip: 0, pid: 14412, name: 'python', memMB: 115 },
    ]);
    expect(r.warnings).toEqual([]);
  });

  it('S3: 8×910B4 idle, "No running processes found" per NPU', () => {
    const r = parseNpuSmiInfo(sample('info-s3.txt'));
    expect(r.devices).toHaveLength(8);
    expect(r.devices.map((d) => d.busId)).toContain('0000:C1:00.0');
    expect(r.devices[7]!.hbmUsedMB).toBe(2653);
    expect(r.processes).toEqual([]);
    expect(r.idleNpus).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('S6: old 910ProB reports real DDR usage, unlike 910B', () => {
    const r = parseNpuSmiInfo(sample('info-s6.txt'));
    expect(r.devices[0]).toMatchObject({
      name: '910ProB',
      memUsedMB: 2387,
      memTotalMB: 13553,
      hbmUsedMB: 18,
    });
  });

  it('S8: A3 with two dies per card, phy ids, "-" power on die 1', () => {
    const r = parseNpuSmiInfo(sample('info-s8.txt'));
    expect(r.layout).toBe('hbm-a3');
    expect(r.devices).toHaveLength(16);
    expect(r.devices.filter((d) => d.npu === 0).map((d) => [d.chip, d.phyId])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(r.devices[1]).toMatchObject({
      npu: 0,
      chip: 1,
      name: 'Ascend910',
      powerW: null,
      tempC: 45,
    });
    expect(r.devices[0]!.powerW).toBe(160.7);
    expect(r.devices[15]).toMatchObject({ npu: 7, chip: 1, phyId: 15, hbmTotalMB: 65536 });
  });

  it('S9: the wider 26.0 layout, cut short after the first process row', () => {
    const r = parseNpuSmiInfo(sample('info-s9.txt'));
    expect(r.smiVersion).toBe('26.0.rc1');
    expect(r.devices).toEqual([
      expect.objectContaining({ npu: 0, hbmUsedMB: 2871, hbmTotalMB: 32768, powerW: 82.6 }),
    ]);
    expect(r.idleNpus).toEqual([0]);
  });

  it('S11: 300I Duo — two 310P3 chips on NPU 6, NA power, no HBM, logic ids', () => {
    const r = parseNpuSmiInfo(sample('info-s11.txt'));
    expect(r.layout).toBe('no-hbm');
    expect(r.devices.map((d) => [d.npu, d.chip, d.logicId])).toEqual([
      [6, 0, 0],
      [6, 1, 1],
    ]);
    expect(r.devices[1]).toMatchObject({
      powerW: null,
      hbmUsedMB: null,
      hbmTotalMB: null,
      memUsedMB: 8322,
      memTotalMB: 43693,
    });
    expect(r.processes).toEqual([
      { npu: 6, chip: 1, pid: 293029, name: 'python3.11', memMB: 6612 },
    ]);
  });

  it('S13: a 310 card with a real power value', () => {
    const r = parseNpuSmiInfo(sample('info-s13.txt'));
    expect(r.devices).toEqual([
      expect.objectContaining({ name: '310', powerW: 12.8, memUsedMB: 577, memTotalMB: 7759 }),
    ]);
  });

  it('S14: the narrow doc variant without a version line', () => {
    const r = parseNpuSmiInfo(sample('info-s14.txt'));
    expect(r.smiVersion).toBeNull();
    expect(r.devices.map((d) => [d.npu, d.logicId, d.memTotalMB])).toEqual([
      [0, 0, 21534],
      [1, 1, 21534],
    ]);
  });
});

describe('npu-smi info edge cases from the format notes', () => {
  const header = [
    '| npu-smi 24.1.0                   Version: 24.1.0                                               |',
    '| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|',
    '| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |',
    '+===========================+===============+====================================================+',
  ];

  it('reads a 5-digit HBM value that touches the slash', () => {
    const r = parseNpuSmiInfo(
      [
        ...header,
        '| 0     910B2               | OK            | 99.6        37                0    / 0             |',
        '| 0                         | 0000:C1:00.0  | 0           0    / 0          59891/ 65536         |',
      ].join('\n'),
    );
    expect(r.devices[0]).toMatchObject({ hbmUsedMB: 59891, hbmTotalMB: 65536 });
  });

  it('keeps a blank process name and flags unhealthy chips as such', () => {
    const r = parseNpuSmiInfo(
      [
        ...header,
        '| 0     910B3               | Alarm         | 99.6        37                0    / 0             |',
        '| 0                         | 0000:C1:00.0  | 12          0    / 0          1000 / 65536         |',
        '| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |',
        '| 0       0                 | 4242          |                          | 2048                    |',
      ].join('\n'),
    );
    expect(r.devices[0]!.health).toBe('Alarm');
    expect(r.processes).toEqual([{ npu: 0, chip: 0, pid: 4242, name: '', memMB: 2048 }]);
  });

  it('never invents a number: bad values become null with a warning naming the line', () => {
    const r = parseNpuSmiInfo(
      [
        ...header,
        '| 0     910B4               | OK            | hot         3x                0    / 0             |',
        '| 0                         | 0000:C1:00.0  | 0           0    / 0          lots / 32768         |',
      ].join('\n'),
    );
    expect(r.devices[0]).toMatchObject({
      powerW: null,
      tempC: null,
      hbmUsedMB: null,
      hbmTotalMB: null,
    });
    expect(r.warnings).toEqual([
      'line 5: power is not a number: "hot"',
      'line 5: temperature is not a number: "3x"',
      'line 6: HBM-Usage is not "used / total": "lots/32768"',
    ]);
  });

  it('reports a half device row when the output is cut', () => {
    const r = parseNpuSmiInfo(
      [
        ...header,
        '| 0     910B4               | OK            | 87.2        33                0    / 0             |',
      ].join('\n'),
    );
    expect(r.devices).toEqual([]);
    expect(r.warnings[0]).toMatch(/line 5: device row without its second line/);
  });

  it('explains npu-smi failures instead of returning an empty table silently', () => {
    const r = parseNpuSmiInfo(
      'DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi module initialize failed. ret is -8005\n',
    );
    expect(r.devices).toEqual([]);
    expect(r.error).toMatchObject({ code: -8005 });
    expect(r.error!.meaning).toMatch(/occupied/);
    const used = parseNpuSmiInfo(
      'dcmi model initialized failed, because the device is used. ret is -8020',
    );
    expect(used.error?.code).toBe(-8020);
  });

  it('collects the driver-not-completely-installed trailer as a warning', () => {
    const r = parseNpuSmiInfo(
      `${sample('info-s3.txt')}[WARNING]The driver package may not be completely installed, which may cause function abnormal. Please reinstall it.\n`,
    );
    expect(r.devices).toHaveLength(8);
    expect(r.warnings).toEqual([expect.stringMatching(/^\[WARNING\]The driver package/)]);
  });

  it('does not crash on garbage', () => {
    for (const junk of [
      '',
      '\n\n',
      'bash: npu-smi: command not found',
      '| | |',
      '|||||\n+--+\n| x |',
      '\u0000\u0001',
    ]) {
      const r = parseNpuSmiInfo(junk);
      expect(r.devices).toEqual([]);
      expect(r.warnings.length + (r.error ? 1 : 0)).toBeGreaterThan(0);
    }
  });
});
