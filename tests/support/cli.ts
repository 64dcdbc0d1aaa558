import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { runCli } from '../../electron/cli/program';
import { appRoot } from '../../electron/core/paths';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output (fast; same code path as the binary). */
export async function amw(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  stdin = '',
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    env: { LANG: 'en_US.UTF-8', ...env },
    interrupted: () => new Promise(() => undefined),
    readStdin: () => Promise.resolve(stdin),
  });
  return { code, stdout, stderr };
}

/** Spawns the real `bin/amw.js` (built bundle) as a user would run it. */
export function spawnAmw(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [join(appRoot(), 'bin', 'amw.js'), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'en_US.UTF-8', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function exitOf(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += String(d)));
  child.stderr?.on('data', (d: Buffer) => (stderr += String(d)));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Resolves with the first line the child prints on stdout. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    child.on('close', (code) => reject(new Error(`exited ${code} before printing a line`)));
  });
}
