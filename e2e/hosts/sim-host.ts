import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, arch as osArch } from 'node:os';
import { dirname, join } from 'node:path';
import type { Core } from '../../electron/core/api/core';
import { appRoot } from '../../electron/core/paths';
import { PROFILES, type HostProfile, type ProfileName } from './profiles';
import { hccnToolFiles } from '../../tests/support/hccn-tool';

/**
 * A simulated Ascend host: a real OpenSSH sshd on 127.0.0.1 with its own host key, started in its
 * own mount namespace where /usr/local carries a generated /usr/local/Ascend and a stub npu-smi,
 * and /dev carries davinci nodes. Users log in as the ordinary user `amw-sim`.
 */
export const SIM_USER = 'amw-sim';
/** Test-only password of the simulated hosts' user. */
export const SIM_PASSWORD = 'amw-sim-Pa55';

const FIXTURES = join(appRoot(), 'tests', 'fixtures', 'npu-smi');

export interface SimHost {
  name: string;
  host: string;
  port: number;
  user: string;
  /** Private key that the host accepts (mode 600). */
  clientKey: string;
  hostKeyFingerprint: string;
  dir: string;
  /** sshd's log so far (LogLevel VERBOSE when started with `verbose`). */
  log(): string;
  /** Replaces the host key and restarts sshd on the same port (a reinstalled, or spoofed, host). */
  rotateHostKey(): Promise<void>;
  /** Ends every process of the host (sshd and open sessions, as a crash) and starts sshd again. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export function simHostsSupported(): { ok: true } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0)
    return { ok: false, reason: 'simulated hosts need root (mount namespaces, sshd)' };
  if (!existsSync('/usr/sbin/sshd'))
    return { ok: false, reason: 'openssh-server is not installed (/usr/sbin/sshd)' };
  return { ok: true };
}

let sharedKey: string | undefined;

function ensureUser(): void {
  try {
    execFileSync('id', [SIM_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['-m', '-s', '/bin/bash', SIM_USER]);
  }
  execFileSync('chpasswd', { input: `${SIM_USER}:${SIM_PASSWORD}\n` });
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
}

/**
 * One client key for all test processes of this user, accepted by every simulated host. Kept in
 * one folder of the user's own and reused: a folder per test process was left behind by each
 * (the test runners end their workers without an exit handler running).
 */
export function simClientKey(): string {
  if (sharedKey && existsSync(sharedKey)) return sharedKey;
  const home = join(tmpdir(), `amw-simkey-${process.getuid?.() ?? 'user'}`);
  const key = join(home, 'id_ed25519');
  if (!ownKeyFolder(home) || !existsSync(key) || !existsSync(`${key}.pub`)) {
    const dir = mkdtempSync(join(tmpdir(), 'amw-simkey-new-'));
    execFileSync('ssh-keygen', [
      '-q',
      '-t',
      'ed25519',
      '-N',
      '',
      '-C',
      'amw-test',
      '-f',
      join(dir, 'id_ed25519'),
    ]);
    chmodSync(join(dir, 'id_ed25519'), 0o600);
    try {
      renameSync(dir, home);
    } catch {
      // another test process made it first (a folder with files in it is never replaced):
      // theirs is used
      rmSync(dir, { recursive: true, force: true });
    }
    if (!ownKeyFolder(home) || !existsSync(key) || !existsSync(`${key}.pub`))
      throw new Error(`${home} is not a key folder of this user's alone: remove it`);
  }
  sharedKey = key;
  return key;
}

/** A folder (not a link) that only this user can read: a key another user planted is not used. */
function ownKeyFolder(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

async function waitForBanner(
  host: string,
  port: number,
  child: ChildProcess,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${log()}`);
    const ok = await new Promise<boolean>((res) => {
      const s = createConnection({ host, port }, () => undefined);
      s.once('data', (d) => {
        s.destroy();
        res(String(d).startsWith('SSH-'));
      });
      s.once('error', () => res(false));
      s.setTimeout(1000, () => {
        s.destroy();
        res(false);
      });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`sshd on ${port} did not come up: ${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** For a host only reachable inside its namespace: sshd writes its pid file once it listens. */
async function waitForPidFile(file: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(file)) {
    if (child.exitCode !== null) throw new Error(`sshd exited (${child.exitCode}): ${log()}`);
    if (Date.now() > deadline) throw new Error(`sshd did not come up: ${log()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function mountNamespaceOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return null;
  }
}

function processesIn(ns: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => pid !== process.pid && mountNamespaceOf(pid) === ns);
}

function kv(entries: Record<string, string>): string {
  return `${Object.entries(entries)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

/**
 * The profile's stub hccn_tool (a test double; one stub for every test: tests/support/hccn-tool,
 * printing the knowledge's §2 samples): NPU i at 192.`net`.i.10/24, its netdetect address .1, the
 * profile's TLS switch on every NPU and its DOWN links.
 */
function hccnStub(h: NonNullable<HostProfile['hccn']>, devices: number) {
  const each = <T>(f: (d: number) => T) =>
    Object.fromEntries(Array.from({ length: devices }, (_, d) => [String(d), f(d)]));
  return hccnToolFiles({
    devices,
    ip: each((d) => `192.${h.net}.${d}.10`),
    netdetect: each((d) => `192.${h.net}.${d}.1`),
    tls: each(() => h.tls),
    link: Object.fromEntries((h.down ?? []).map((d) => [String(d), 'DOWN' as const])),
  });
}

/** Writes the overlay for /usr/local: Ascend tree and the npu-smi stub, per the profile. */
function writeUsrLocal(upper: string, profile: HostProfile): void {
  const unameArch = osArch() === 'arm64' ? 'aarch64' : 'x86_64';
  const ascend = join(upper, 'Ascend');
  if (profile.cann) {
    const latest = join(ascend, 'ascend-toolkit', 'latest');
    mkdirSync(join(latest, `${unameArch}-linux`), { recursive: true });
    writeFileSync(
      join(latest, `${unameArch}-linux`, 'ascend_toolkit_install.info'),
      kv({
        package_name: 'Ascend-cann-toolkit',
        version: profile.cann,
        arch: unameArch,
        os: 'linux',
        path: `/usr/local/Ascend/ascend-toolkit/${profile.cann}/${unameArch}-linux`,
      }),
    );
    writeFileSync(
      join(ascend, 'ascend-toolkit', 'set_env.sh'),
      [
        '# simulated CANN set_env.sh (test double)',
        'export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest',
        'export LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/lib64:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}',
        'export ASCEND_OPP_PATH=${ASCEND_TOOLKIT_HOME}/opp',
        'export ASCEND_AICPU_PATH=${ASCEND_TOOLKIT_HOME}',
        'export ASCEND_HOME_PATH=${ASCEND_TOOLKIT_HOME}',
        'export PATH=${ASCEND_TOOLKIT_HOME}/bin:${PATH}',
        '',
      ].join('\n'),
    );
  }
  if (profile.driver) {
    mkdirSync(join(ascend, 'driver'), { recursive: true });
    writeFileSync(
      join(ascend, 'driver', 'version.info'),
      kv({
        Version: profile.driver,
        ascendhal_version: '7.35.23',
        package_version: profile.driver,
      }),
    );
  }
  if (profile.hccn)
    for (const [rel, file] of Object.entries(hccnStub(profile.hccn, profile.davinci ?? 8) ?? {})) {
      mkdirSync(dirname(join(upper, rel)), { recursive: true });
      writeFileSync(join(upper, rel), file.content, { mode: file.mode ?? 0o644 });
    }
  if (profile.firmware) {
    mkdirSync(join(ascend, 'firmware'), { recursive: true });
    writeFileSync(
      join(ascend, 'firmware', 'version.info'),
      kv({ Version: profile.firmware, firmware_version: '1.0' }),
    );
  }
  const sim = join(ascend, '.sim');
  mkdirSync(sim, { recursive: true });
  writeFileSync(join(sim, 'chip'), profile.chipName ?? '');
  writeFileSync(join(sim, 'fallback'), (profile.fallbackOps ?? []).join(','));
  writeFileSync(join(sim, 'perturb'), (profile.perturbOps ?? []).join(','));
  if (profile.torchNpu) {
    // Debian's python3 searches /usr/local/lib/python3.X/dist-packages, which the overlay provides
    const site = join(upper, 'lib', `python3.${pythonMinor()}`, 'dist-packages');
    mkdirSync(join(site, 'torch_npu'), { recursive: true });
    const code = readFileSync(
      join(appRoot(), 'e2e', 'hosts', 'standin', 'torch_npu.py.txt'),
      'utf8',
    ).replace('@@VERSION@@', profile.torchNpu);
    writeFileSync(join(site, 'torch_npu', '__init__.py'), code);
    writeFileSync(join(site, 'torch_npu', 'version.py'), `__version__ = '${profile.torchNpu}'\n`);
    mkdirSync(join(site, `torch_npu-${profile.torchNpu}.dist-info`));
    writeFileSync(
      join(site, `torch_npu-${profile.torchNpu}.dist-info`, 'METADATA'),
      `Metadata-Version: 2.1\nName: torch_npu\nVersion: ${profile.torchNpu}\nSummary: stand-in for simulated hosts\n`,
    );
  }
  const sbin = join(upper, 'sbin');
  mkdirSync(sbin, { recursive: true });
  if (profile.npuSmi) {
    copyFileSync(join(FIXTURES, profile.npuSmi), join(sbin, 'npu-smi.txt'));
    writeFileSync(
      join(sbin, 'npu-smi'),
      `#!/bin/sh\n# stub npu-smi for a simulated host: prints a real sample (test double)\ncase "$1 $2" in\n  "info ") cat /usr/local/sbin/npu-smi.txt ;;\n  "-v "*) echo "npu-smi version: ${profile.driver ?? 'unknown'}" ;;\n  *) echo "Command or option is not found."; exit 1 ;;\nesac\n`,
      { mode: 0o755 },
    );
  } else if (profile.npuSmiFailure) {
    writeFileSync(
      join(sbin, 'npu-smi'),
      `#!/bin/sh\ncat <<'EOF'\n${profile.npuSmiFailure}\nEOF\nexit 255\n`,
      { mode: 0o755 },
    );
  }
}

let cachedMinor: string | undefined;
function pythonMinor(): string {
  cachedMinor ??= existsSync('/usr/bin/python3')
    ? execFileSync('/usr/bin/python3', ['-c', 'import sys; print(sys.version_info[1])'], {
        encoding: 'utf8',
      }).trim()
    : '11';
  return cachedMinor;
}

/** The user's home on this host: its own ~/.bashrc, so login scripts differ per profile. */
function writeHome(home: string, profile: HostProfile): void {
  mkdirSync(home, { recursive: true });
  const source = 'source /usr/local/Ascend/ascend-toolkit/set_env.sh';
  const guard =
    "# If not running interactively, don't do anything\ncase $- in\n    *i*) ;;\n      *) return;;\nesac";
  const lines = profile.cann
    ? profile.setEnvForNonInteractive === false
      ? [guard, source] // the common mistake: sourced after the interactive-only guard
      : [source, guard]
    : [guard];
  writeFileSync(join(home, '.bashrc'), `${lines.join('\n')}\n`);
  const uid = Number(execFileSync('id', ['-u', SIM_USER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', SIM_USER], { encoding: 'utf8' }).trim());
  chownSync(home, uid, gid);
  chownSync(join(home, '.bashrc'), uid, gid);
}

function namespaceScript(dir: string, profile: HostProfile, hostname?: string): string {
  const dev = join(dir, 'dev');
  const mode = profile.deviceMode ?? '666';
  const nodes = Array.from(
    { length: profile.davinci },
    (_, i) => `mknod -m ${mode} ${dev}/davinci${i} c 236 ${i}`,
  );
  if (profile.davinci) {
    nodes.push(
      `mknod -m ${mode} ${dev}/davinci_manager c 237 0`,
      `mknod -m ${mode} ${dev}/devmm_svm c 238 0`,
      `mknod -m ${mode} ${dev}/hisi_hdc c 239 0`,
    );
  }
  return [
    'set -e',
    // its own UTS namespace (unshare -u): the name torchrun and gloo resolve through /etc/hosts
    ...(hostname ? [`hostname ${hostname}`] : []),
    'mount --make-rprivate /',
    `mount -t overlay overlay -o lowerdir=/usr/local,upperdir=${dir}/upper,workdir=${dir}/work /usr/local`,
    `mkdir -p ${dev}`,
    `mount -t tmpfs -o mode=755 tmpfs ${dev}`,
    `for n in null zero full random urandom tty; do touch ${dev}/$n; mount --bind /dev/$n ${dev}/$n; done`,
    // a private devpts, as containers have, so sshd can allocate terminals
    `mkdir ${dev}/pts ${dev}/shm && mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts ${dev}/pts`,
    `ln -s pts/ptmx ${dev}/ptmx && mount -t tmpfs tmpfs ${dev}/shm`,
    `ln -s /proc/self/fd ${dev}/fd`,
    ...nodes,
    `mount --move ${dev} /dev`,
    `mount --bind ${dir}/home /home/${SIM_USER}`,
    `exec /usr/sbin/sshd -D -e -f ${dir}/sshd_config`,
  ].join('\n');
}

export interface SimNetwork {
  /** Network namespace name. */
  ns: string;
  /** This machine's side of the veth pair. */
  hostAddress: string;
  /** The namespace's side: reachable from this machine. Its 127.0.0.1 is not. */
  nsAddress: string;
  destroy(): void;
}

let netCounter = 0;

/**
 * A network namespace joined to this machine by a veth pair on a /30 out of 198.18.0.0/15 (the
 * range set aside for benchmarks), so a host inside can be made reachable only through another.
 */
export function createSimNetwork(): SimNetwork {
  const id = `${process.pid % 10000}${netCounter++}`;
  const ns = `amw-n${id}`;
  const outer = `amwo${id}`;
  const inner = `amwi${id}`;
  const n = (process.pid * 7 + netCounter * 4) % 16384;
  const base = `198.${18 + (n >> 13)}.${(n >> 5) & 255}.${(n & 31) * 8}`;
  const [a, b, c, d0] = base.split('.').map(Number) as [number, number, number, number];
  const hostAddress = `${a}.${b}.${c}.${d0 + 1}`;
  const nsAddress = `${a}.${b}.${c}.${d0 + 2}`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
  ip('netns', 'add', ns);
  try {
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner, 'netns', ns);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', outer);
    ip('link', 'set', outer, 'up');
    ip('-n', ns, 'addr', 'add', `${nsAddress}/30`, 'dev', inner);
    ip('-n', ns, 'link', 'set', inner, 'up');
  } catch (err) {
    execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    throw err;
  }
  return {
    ns,
    hostAddress,
    nsAddress,
    destroy() {
      try {
        ip('netns', 'del', ns); // takes the veth pair with it
      } catch {
        // already gone
      }
    },
  };
}

export interface SimHostOptions {
  port?: number;
  verbose?: boolean;
  network?: SimNetwork;
  listen?: string;
  /** Own hostname (a UTS namespace), as each machine of a real fleet has. */
  hostname?: string;
  /** More files under /usr/local (path relative to it), e.g. a stub tool the profile lacks. */
  usrLocalFiles?: Record<string, { content: string; mode?: number }>;
}

export async function startSimHost(
  name: string,
  profileName: ProfileName,
  opts: SimHostOptions = {},
): Promise<SimHost> {
  const supported = simHostsSupported();
  if (!supported.ok) throw new Error(supported.reason);
  if (opts.hostname !== undefined && !/^[a-z][a-z0-9-]{0,62}$/.test(opts.hostname))
    throw new Error(`not a hostname: ${opts.hostname}`);
  ensureUser();
  const profile: HostProfile = PROFILES[profileName];
  const dir = mkdtempSync(join(tmpdir(), `amw-sim-${name}-`));
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'upper'));
  mkdirSync(join(dir, 'work'));
  writeUsrLocal(join(dir, 'upper'), profile);
  for (const [rel, file] of Object.entries(opts.usrLocalFiles ?? {})) {
    const path = join(dir, 'upper', rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.content, { mode: file.mode ?? 0o644 });
  }
  writeHome(join(dir, 'home'), profile);
  const clientKey = simClientKey();
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`));
  chmodSync(join(dir, 'authorized_keys'), 0o644);
  const port = opts.port ?? (opts.network ? 22 : await freePort());
  const listen = opts.listen ?? '127.0.0.1';
  const hostKey = join(dir, 'ssh_host_ed25519_key');

  const makeHostKey = () => {
    rmSync(hostKey, { force: true });
    rmSync(`${hostKey}.pub`, { force: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    return execFileSync('ssh-keygen', ['-lf', `${hostKey}.pub`], { encoding: 'utf8' }).split(
      ' ',
    )[1]!;
  };
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      `ListenAddress ${listen}`,
      `HostKey ${hostKey}`,
      `PidFile ${dir}/sshd.pid`,
      `AuthorizedKeysFile ${dir}/authorized_keys`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication yes',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin no',
      `AllowUsers ${SIM_USER}`,
      'AllowTcpForwarding yes',
      'MaxStartups 200:30:400',
      'MaxSessions 100',
      'Subsystem sftp internal-sftp',
      `LogLevel ${opts.verbose ? 'VERBOSE' : 'ERROR'}`,
      '',
    ].join('\n'),
  );

  let child: ChildProcess;
  let log = '';
  const launch = async () => {
    rmSync(join(dir, 'sshd.pid'), { force: true });
    const argv = [
      'unshare',
      '-m',
      ...(opts.hostname ? ['-u'] : []),
      'sh',
      '-c',
      namespaceScript(dir, profile, opts.hostname),
    ];
    const [cmd, ...args] = opts.network ? ['ip', 'netns', 'exec', opts.network.ns, ...argv] : argv;
    child = spawn(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (log += String(d)));
    // a host listening on its namespace's own loopback cannot be dialled from here
    if (opts.network && listen === '127.0.0.1')
      await waitForPidFile(join(dir, 'sshd.pid'), child, () => log);
    else await waitForBanner(listen, port, child, () => log);
  };
  const stopChild = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    // Every process of this host (sshd, its per-connection children, sessions) lives in the
    // host's mount namespace: end them all, as a reboot would, so open connections drop.
    const ns = mountNamespaceOf(child.pid!);
    for (const pid of ns ? processesIn(ns) : [child.pid!]) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await exited;
  };

  const host: SimHost = {
    name,
    host: listen,
    port,
    user: SIM_USER,
    clientKey,
    hostKeyFingerprint: makeHostKey(),
    dir,
    log: () => log,
    async rotateHostKey() {
      await stopChild();
      host.hostKeyFingerprint = makeHostKey();
      await launch();
    },
    async restart() {
      await stopChild();
      await launch();
    },
    async stop() {
      await stopChild();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await launch();
  return host;
}

/** Adds a simulated host to an engine the way a user would (hosts.add), logging in with its key. */
export function registerSimHost(
  core: Pick<Core, 'call'>,
  sim: SimHost,
  extra: { name?: string; group?: string | null; identityFile?: string | null } = {},
) {
  return core.call('hosts.add', {
    name: extra.name ?? sim.name,
    hostname: sim.host,
    port: sim.port,
    username: sim.user,
    identityFile: extra.identityFile === undefined ? sim.clientKey : extra.identityFile,
    group: extra.group ?? null,
  });
}
