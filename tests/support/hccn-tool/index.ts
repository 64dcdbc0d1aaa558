import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimHost, SimHostOptions } from '../../../e2e/hosts/sim-host';
import { appRoot } from '../../../electron/core/paths';

/**
 * TEST DOUBLE: where the stub `hccn_tool` (hccn_tool.py, real sample outputs) goes on a simulated
 * host, and the per-host config a test writes to make a device's link DOWN, a TLS switch differ,
 * or an IP change.
 */
export const HCCN_TOOL_PATH = '/usr/local/Ascend/driver/tools/hccn_tool';
const REL = 'Ascend/driver/tools';

export interface HccnStubConfig {
  devices?: number;
  /** device → UP | DOWN (default UP). */
  link?: Record<string, 'UP' | 'DOWN'>;
  /** device → TLS switch 0|1 (default 0). */
  tls?: Record<string, 0 | 1>;
  /** device → IP; '' = unconfigured (empty output); default 192.161.(200+dev).10. */
  ip?: Record<string, string>;
  netmask?: string;
  /** device → net health string (default Success). */
  netHealth?: Record<string, string>;
  netdetect?: Record<string, string>;
  /** Options this driver build does not have ("Command or option is not found."). */
  missing?: string[];
  /** Every call answers `hccn_tool is busy, please try again`. */
  busy?: boolean;
}

const here = join(appRoot(), 'tests', 'support', 'hccn-tool');

/** usrLocalFiles for startSimHost / startNetnsFleet: the stub, its samples, its config. */
export function hccnToolFiles(config: HccnStubConfig = {}): SimHostOptions['usrLocalFiles'] {
  const files: NonNullable<SimHostOptions['usrLocalFiles']> = {
    [`${REL}/hccn_tool`]: {
      content: readFileSync(join(here, 'hccn_tool.py'), 'utf8'),
      mode: 0o755,
    },
    [`${REL}/hccn_tool.stub.json`]: { content: JSON.stringify(config) },
  };
  for (const f of readdirSync(join(here, 'samples')))
    files[`${REL}/hccn_tool.samples/${f}`] = {
      content: readFileSync(join(here, 'samples', f), 'utf8'),
    };
  return files;
}

/** Changes a running host's stub config (the file lives in the host's /usr/local overlay). */
export function setHccnConfig(sim: SimHost, config: HccnStubConfig): void {
  writeFileSync(join(sim.dir, 'upper', REL, 'hccn_tool.stub.json'), JSON.stringify(config));
}
