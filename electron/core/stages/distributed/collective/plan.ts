import type { Msg } from '../../../../../shared/api/text';
import type { DetectedHost } from './detect';
import { ct } from './text';
import type { CollectiveHost, CollectiveOptions, LauncherName } from './types';

export interface Plan {
  launcher: LauncherName;
  backend: 'gloo' | 'hccl';
  perNode: number;
  world: number;
  /** Also measure with hccl_test through mpirun after a good torchrun on NPUs. */
  hcclTestAfter: boolean;
  notes: Msg[];
}

/** All hosts in one Slurm allocation with srun: the hosts are a Slurm partition. */
export function isSlurm(detected: DetectedHost[]): boolean {
  return detected.every((d) => d.commands.srun && (d.slurmJob || d.commands.sinfo));
}

const hasTorch = (d: DetectedHost) => Boolean(d.python?.torch);
const hasHcclTest = (d: DetectedHost) => Boolean(d.hcclTest && d.commands.mpirun);

/**
 * Which launcher and backend: `hccl` where every host has an NPU and torch_npu, `gloo` otherwise
 * (said so). Auto: srun on a Slurm partition; torchrun where torch is everywhere; msrun for a
 * MindSpore project (mindspore and no torch); mpirun + hccl_test on NPU hosts that have only that.
 */
export function choosePlan(
  hosts: CollectiveHost[],
  detected: DetectedHost[],
  requested: CollectiveOptions['launcher'] = 'auto',
): Plan | { error: Msg } {
  const npu = hosts.every((h) => h.hasNpu && h.npuCount > 0);
  const torchNpu = npu && detected.every((d) => d.python?.torchNpu);
  const mindsporeOnly = detected.every((d) => d.python?.mindspore && !hasTorch(d));
  const missing = (test: (d: DetectedHost) => boolean) => hosts.find((_, i) => !test(detected[i]!));
  const noPython = hosts.find((_, i) => !detected[i]!.commands.python3 && !detected[i]!.python);
  let launcher: LauncherName;
  if (requested !== 'auto') launcher = requested;
  else if (isSlurm(detected) && detected.every(hasTorch)) launcher = 'srun';
  else if (detected.every(hasTorch)) launcher = 'torchrun';
  else if (mindsporeOnly && npu) launcher = 'msrun';
  else if (npu && detected.every(hasHcclTest)) launcher = 'mpirun';
  else {
    if (noPython) return { error: ct('error.noPython', { host: noPython.name }) };
    const noTorch = missing(hasTorch);
    if (noTorch) return { error: ct('error.noTorch', { host: noTorch.name }) };
    return { error: ct('error.noLauncher') };
  }
  const needs: Record<LauncherName, (d: DetectedHost) => boolean> = {
    torchrun: hasTorch,
    srun: (d) => hasTorch(d) && Boolean(d.commands.srun),
    msrun: (d) => Boolean(d.python?.mindspore && d.commands.msrun),
    mpirun: hasHcclTest,
  };
  const lacking = missing(needs[launcher]);
  if (lacking) return { error: ct('error.launcherMissing', { launcher, host: lacking.name }) };
  const backend = launcher === 'msrun' || launcher === 'mpirun' || torchNpu ? 'hccl' : 'gloo';
  // one rank per NPU on NPU hosts; one per CPU host (gloo checks the launch, not compute)
  const perNode = backend === 'hccl' ? Math.min(...hosts.map((h) => h.npuCount)) : 1;
  const notes = [ct(backend === 'hccl' ? 'note.hccl' : 'note.gloo')];
  return {
    launcher,
    backend,
    perNode,
    world: perNode * hosts.length,
    hcclTestAfter:
      requested === 'auto' &&
      launcher === 'torchrun' &&
      backend === 'hccl' &&
      detected.every(hasHcclTest),
    notes,
  };
}

/**
 * The environment a node's launcher gets: the interface gloo binds (GLOO_SOCKET_IFNAME) and the
 * address HCCL talks to the root on (HCCL_IF_IP) are this host's own — unless one launcher starts
 * every node (srun, mpirun carry its environment to all of them): then neither is set, since the
 * first host's values would be wrong everywhere else. One thread per CPU rank: gloo checks the
 * launch and the network here, not compute, and the hosts share their cores with the job.
 */
export function nodeEnv(
  backend: 'gloo' | 'hccl',
  address: string,
  iface: string | undefined,
  sharedAcrossNodes: boolean,
): Record<string, string> {
  const own = sharedAcrossNodes
    ? {}
    : {
        ...(iface ? { GLOO_SOCKET_IFNAME: iface } : {}),
        ...(backend === 'hccl' ? { HCCL_IF_IP: address } : {}),
      };
  return { ...own, ...(backend === 'gloo' ? { OMP_NUM_THREADS: '1' } : {}) };
}
