import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SimHost } from '../../e2e/hosts/sim-host';

/**
 * Makes the host's stub npu-smi slow (a test double for a busy host): it first leaves a mark in
 * the user's home, so a test knows the stage is mid-way, then waits before printing its sample.
 */
export function slowNpuSmi(
  sim: SimHost,
  seconds: number,
): { started: () => boolean; reset: () => void } {
  const mark = join(sim.dir, 'home', '.npu-smi-started');
  const stub = join(sim.dir, 'upper', 'sbin', 'npu-smi');
  writeFileSync(
    stub,
    `#!/bin/sh\n# stub npu-smi for a simulated host, slowed down for a fault test (test double)\ntouch "$HOME/.npu-smi-started"\nsleep ${seconds}\ncase "$1 $2" in\n  "info ") cat /usr/local/sbin/npu-smi.txt ;;\n  *) echo "Command or option is not found."; exit 1 ;;\nesac\n`,
  );
  chmodSync(stub, 0o755);
  return {
    started: () => existsSync(mark),
    reset: () => rmSync(mark, { force: true }),
  };
}

export async function until(
  pred: () => boolean,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<void> {
  const t0 = Date.now();
  while (!pred()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sh = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
