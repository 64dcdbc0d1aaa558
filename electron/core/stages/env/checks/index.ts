import { deviceNodes, npuHealth, visibleDevices } from './devices';
import { limits } from './limits';
import { pythonPackages } from './packages';
import { npuOpRuns, setEnv, torchNpuImport } from './runtime';
import type { EnvCheck } from './text';
import { driverCann, versionMatrix } from './versions';

export type { EnvCheck, Verdict } from './text';
export {
  deviceNodes,
  driverCann,
  limits,
  npuHealth,
  npuOpRuns,
  pythonPackages,
  setEnv,
  torchNpuImport,
  versionMatrix,
  visibleDevices,
};

/** The environment stage, in the order a porter fixes things. Ids are stable. */
export const ENV_CHECKS: EnvCheck[] = [
  versionMatrix,
  driverCann,
  setEnv,
  deviceNodes,
  npuHealth,
  visibleDevices,
  torchNpuImport,
  npuOpRuns,
  pythonPackages,
  limits,
];
