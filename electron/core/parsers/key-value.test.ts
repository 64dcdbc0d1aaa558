import { describe, expect, it } from 'vitest';
import { numberOf, parseNpuSmiKeyValue } from './key-value';
import {
  cannFromToolkitInfo,
  cannFromVersionCfg,
  driverFromVersionInfo,
  firmwareFromVersionInfo,
} from './versions';

// Real outputs quoted in ../shared/knowledge/ascend-host-formats.md §2 and §3.
const COMMON_910B1 = `        NPU ID                         : 1
        Chip Count                     : 1

        Chip ID                        : 0
        Memory Usage Rate(%)           : 0
        HBM Usage Rate(%)              : 4
        Aicore Usage Rate(%)           : 0
        Aicore Freq(MHZ)               : 1800
        Aicore curFreq(MHZ)            : 800
        Aicore Count                   : 24
        Temperature(C)                 : 46
        NPU Real-time Power(W)         : 93.4

        Chip Name                      : mcu
        Temperature(C)                 : 38
`;

const BOARD = `        NPU ID                         : 0
        Product Name                   : IT21HMDC_Bin5
        Model                          : NA
        Software Version               : 25.5.1
        Firmware Version               : 7.8.0.6.201
        Board ID                       : 0x60
        PCIe Bus Info                  : 0000:C1:00.0
`;

describe('npu-smi -t key : value output', () => {
  it('keeps blocks apart so the MCU temperature is not mistaken for the chip', () => {
    const r = parseNpuSmiKeyValue(COMMON_910B1);
    expect(r.blocks).toHaveLength(3);
    expect(r.blocks[1]!['Temperature(C)']).toBe('46');
    expect(r.blocks[2]).toEqual({ 'Chip Name': 'mcu', 'Temperature(C)': '38' });
    expect(numberOf(r.blocks[1]!['NPU Real-time Power(W)'])).toBe(93.4);
    expect(r.warnings).toEqual([]);
  });

  it('reads board info values as text, numbers only when they are numbers', () => {
    const b = parseNpuSmiKeyValue(BOARD).blocks[0]!;
    expect(b['PCIe Bus Info']).toBe('0000:C1:00.0');
    expect(numberOf(b['Board ID'])).toBe(0x60);
    expect(numberOf(b.Model)).toBeNull();
    expect(numberOf(b['Software Version'])).toBeNull();
  });

  it('warns about lines it cannot read and keeps the rest', () => {
    const r = parseNpuSmiKeyValue('  NPU ID : 0\ngarbage line\n  Chip Count : 1\n');
    expect(r.blocks).toEqual([{ 'NPU ID': '0', 'Chip Count': '1' }]);
    expect(r.warnings).toEqual(['line 2: not a "label : value" line: garbage line']);
  });
});

describe('version files', () => {
  it('CANN from ascend_toolkit_install.info', () => {
    const r = cannFromToolkitInfo(
      'package_name=Ascend-cann-toolkit\nversion=8.1.RC1\ninnerversion=V100R001C21SPC001B238\narch=aarch64\n',
    );
    expect(r.version).toBe('8.1.RC1');
  });

  it('CANN from version.cfg', () => {
    const r = cannFromVersionCfg(
      '# version: 1.0\ntoolkit_running_version=[7.6.T13.0.B094:8.0.T63]\n',
    );
    expect(r.version).toBe('8.0.T63');
  });

  it('driver prefers package_version, falls back to Version on older files', () => {
    expect(driverFromVersionInfo('Version=7.35.23\npackage_version=25.0.rc1.1\n').version).toBe(
      '25.0.rc1.1',
    );
    expect(driverFromVersionInfo('Version=24.1.rc1\nascendhal_version=7.35.19\n').version).toBe(
      '24.1.rc1',
    );
  });

  it('firmware version, and absent versus unreadable', () => {
    expect(firmwareFromVersionInfo('Version=7.7.0.1.231\nfirmware_version=1.0\n').version).toBe(
      '7.7.0.1.231',
    );
    expect(firmwareFromVersionInfo(null)).toEqual({ version: null, warnings: [], fields: {} });
    const bad = firmwareFromVersionInfo('not a version file at all');
    expect(bad.version).toBeNull();
    expect(bad.warnings).toHaveLength(2);
  });
});
