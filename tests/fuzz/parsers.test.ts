/**
 * Fuzz suite for every parser of untrusted text: npu-smi info (table) and -t (key : value),
 * version files, known_hosts, ssh_config, the inventory probe's JSON and op traces. Each input
 * is real sample text mutated, or generated; each runs in a worker with a deadline and a heap
 * cap. Properties: no untyped exception, no hang, bounded memory and output, no raw control
 * bytes in a warning, and a line the grammar does not accept is a warning naming that line.
 *
 * `npm test` runs a short budget; `npm run fuzz` a long one (AMW_FUZZ_SECONDS, default 600).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  budgetMs,
  cleanupBundle,
  DEADLINE_MS,
  FuzzWorker,
  inputsFrom,
  MARKER,
  RAW_CONTROL,
  read,
  withGarbageLine,
  type Outcome,
} from './harness';

const dirFiles = (...p: string[]) =>
  readdirSync(join(__dirname, '..', '..', ...p))
    .filter((f) => f.endsWith('.txt'))
    .map((f) => read(...p, f));

const NPU_SMI = [
  ...dirFiles('tests', 'fixtures', 'npu-smi'),
  ...dirFiles('tests', 'fixtures', 'fuzz', 'npu-smi-info'),
];
const NPU_SMI_T = dirFiles('tests', 'fixtures', 'fuzz', 'npu-smi-t');
const VERSIONS = dirFiles('tests', 'fixtures', 'fuzz', 'versions');

const scratch = mkdtempSync(join(tmpdir(), 'amw-fuzz-home-'));

const b64 = (s: string) => Buffer.from(s).toString('base64');
const KEYS = [
  'AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
  'AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=',
];
const KNOWN_HOSTS = [
  `gpu-a,10.0.0.1 ssh-ed25519 ${KEYS[0]}\n[gpu-box.example]:2200 ssh-ed25519 ${KEYS[0]}\n`,
  `# comment\n@revoked * ssh-ed25519 ${KEYS[0]}\n|1|F1E1KeoE/eEWhi10WpGv4OdiO6Y=|3988QV0VE8wmZL7suNrYQLITLCg= ecdsa-sha2-nistp256 ${KEYS[1]}\n!bad,*.example ssh-ed25519 ${KEYS[0]}\n@cert-authority *.corp ssh-ed25519 ${KEYS[0]}\n`,
];
const SSH_CONFIGS = [
  'Host bastion\n  HostName 203.0.113.10\n  User ops\n  IdentityFile ~/.ssh/id_ed25519\n\nHost npu-*\n  User porter\n  ProxyJump bastion\n\nHost npu-a npu-b\n  HostName %h.cluster.local\n  Port 2222\n',
  `Host *\n  ServerAliveInterval 30\nMatch exec "touch ${MARKER}"\n  User evil\nHost gpu\n  HostName 10.0.0.5\n  ProxyJump ops@jump.example:2200,bastion\nMatch host 10.0.0.5 !user root\n  Port 2200\nInclude /dev/null\n`,
];
const probeDoc = (smi: string, versions: string) =>
  JSON.stringify({
    sections: {
      os: { rc: 0, out: b64('PRETTY_NAME="openEuler 22.03 (LTS-SP4)"\nID=openEuler\n') },
      uname: { rc: 0, out: b64('Linux 5.10.0-216.0.0.115.oe2203sp4.aarch64 aarch64\n') },
      hostname: { rc: 0, out: b64('npu-a\n') },
      cpu: { rc: 0, out: b64('model name\t: Kunpeng-920\n192\n') },
      meminfo: {
        rc: 0,
        out: b64('MemTotal:       1584872908 kB\nMemAvailable:   1499999999 kB\n'),
      },
      disk: {
        rc: 0,
        out: b64(
          'Filesystem 1K-blocks Used Available Use% Mounted on\n/dev/sda1 100 50 50 50% /\n',
        ),
      },
      npu_smi: { rc: 0, out: b64(smi) },
      toolkit: {
        rc: 0,
        out: b64(
          `==> /usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info\n${versions}`,
        ),
      },
      driver: { rc: 0, out: b64(`==> /usr/local/Ascend/driver/version.info\n${versions}`) },
      firmware: { rc: 0, out: b64(`==> /usr/local/Ascend/firmware/version.info\n${versions}`) },
      env_before: { rc: 0, out: b64('PATH=/usr/bin\n') },
      env_after: {
        rc: 0,
        out: b64('# sourced /usr/local/Ascend/ascend-toolkit/set_env.sh\nASCEND_TOOLKIT_HOME=/x\n'),
      },
      python: {
        rc: 0,
        out: b64('{"python":"3.10.12","torch":"2.1.0","torch_npu":"2.1.0.post12"}\n'),
      },
      devices: { rc: 0, out: b64('crw-rw-rw- 1 root root 236, 0 /dev/davinci0\n') },
    },
  });
const op = (name: string, extra: Record<string, unknown> = {}) => ({
  op: `aten::${name}`,
  overload: 'default',
  count: 3,
  shapes: [[[8, 128]]],
  distinctShapes: 1,
  dynamic: false,
  dtypes: ['float32'],
  modules: ['model.encoder'],
  sources: [{ at: 'train.py:10', text: 'y = x @ w' }],
  sparse: false,
  phases: ['forward'],
  composite: null,
  callees: null,
  ...extra,
});
const TRACES = [
  `log line\n@@AMW-OPS@@${JSON.stringify({ v: 1, entry: 'm.py:f', backward: true, batches: 2, inputs: [[{ shape: [2, 5], dtype: 'int64' }], [{ shape: [2, 9], dtype: 'int64' }]], ops: [op('mm'), op('gelu'), op('_to_sparse', { sparse: true }), op('index_put_', { composite: 'explicit', callees: ['aten::index'] })], warnings: [], error: null })}\n`,
];

interface Target {
  name: string;
  seeds: string[];
  /** Inputs beyond the mutated seeds (structure-aware). */
  more?: fc.Arbitrary<string>;
  /** Whether a line outside the grammar must be named in a warning. */
  linesWarn: boolean;
  /** Parsers without warnings (known_hosts skips what it cannot read, as ssh does): a line
   *  outside the grammar must then change nothing in the output. */
  strayIgnored?: boolean;
  /** For the garbage-line property: wrap the text the way the parser receives it. */
  wrap?: (text: string) => string;
}

const TARGETS: Target[] = [
  { name: 'npu-smi-info', seeds: NPU_SMI, linesWarn: true },
  { name: 'npu-smi-t', seeds: NPU_SMI_T, linesWarn: true },
  { name: 'version-files', seeds: VERSIONS, linesWarn: true },
  { name: 'known-hosts', seeds: KNOWN_HOSTS, linesWarn: false, strayIgnored: true },
  { name: 'ssh-config', seeds: SSH_CONFIGS, linesWarn: true },
  {
    name: 'inventory-probe',
    // the interesting path: a well-formed document whose sections carry mutated host text
    more: fc
      .tuple(inputsFrom(NPU_SMI), inputsFrom(VERSIONS))
      .map(([smi, versions]) => probeDoc(smi, versions)),
    seeds: NPU_SMI.map((s, i) => probeDoc(s, VERSIONS[i % VERSIONS.length]!)),
    linesWarn: false,
  },
  {
    name: 'op-trace',
    seeds: TRACES,
    linesWarn: false,
    // well-formed JSON with any field of any op replaced by any JSON value
    more: fc
      .array(
        fc.oneof(
          fc.constant(op('mm')),
          fc.jsonValue(),
          fc
            .tuple(fc.constantFrom(...Object.keys(op('mm'))), fc.jsonValue())
            .map(([k, v]) => ({ ...op('addmm'), [k]: v })),
        ),
        { maxLength: 20 },
      )
      .map(
        (ops) =>
          `@@AMW-OPS@@${JSON.stringify({ v: 1, entry: 'm.py:f', backward: false, batches: 1, inputs: [], ops, warnings: [], error: null })}\n`,
      ),
  },
];

const workers: FuzzWorker[] = [];
const stats: string[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  cleanupBundle();
  rmSync(scratch, { recursive: true, force: true });
  console.log(`fuzz (deadline ${DEADLINE_MS} ms per input):\n${stats.join('\n')}`);
});

function check(o: Outcome, input: string): void {
  if (o.kind === 'hang') throw new Error(`no answer within ${DEADLINE_MS} ms`);
  if (o.kind === 'memory') throw new Error(`worker heap exhausted: ${o.error}`);
  if (o.kind === 'error') throw new Error(`untyped exception: ${o.error}`);
  // bounded output: a parse never holds much more than its input
  expect(o.json!.length, 'output bounded by the input').toBeLessThan(8 * input.length + 65_536);
  for (const w of o.warnings ?? []) {
    expect(w.length, 'a warning is short').toBeLessThan(1000);
    expect(RAW_CONTROL.test(w), `raw control character in warning ${JSON.stringify(w)}`).toBe(
      false,
    );
  }
}

const budget = budgetMs(TARGETS.length);

describe('fuzz: parsers of untrusted text', () => {
  for (const t of TARGETS) {
    it(
      `${t.name}: no crash, no hang, bounded, warnings escaped${t.linesWarn ? ', stray lines named' : t.strayIgnored ? ', stray lines change nothing' : ''}`,
      async () => {
        const w = new FuzzWorker(t.name, scratch);
        workers.push(w);
        let runs = 0;
        let slowest = 0;
        let refusals = 0;
        // the worker started and the first seed read before the clock (not counted in `runs`,
        // which must still see fast-check's own inputs): on a loaded machine the start alone
        // outlasted a short budget and fast-check ran no input at all
        const first = t.seeds[0]!;
        check(await w.run(first), first);
        const started = performance.now();
        const inputs = t.more ? fc.oneof(inputsFrom(t.seeds), t.more) : inputsFrom(t.seeds);
        const generic = fc.asyncProperty(inputs, async (input) => {
          runs++;
          const o = await w.run(input);
          slowest = Math.max(slowest, o.ms);
          if (o.refused) refusals++;
          check(o, input);
          // nothing a config says is ever run
          expect(existsSync(MARKER), 'a command named by the input was run').toBe(false);
        });
        const share = t.linesWarn || t.strayIgnored ? budget / 2 : budget;
        await fc.assert(generic, {
          numRuns: Number.MAX_SAFE_INTEGER,
          interruptAfterTimeLimit: share,
          markInterruptAsFailure: false,
          endOnFailure: true,
        });
        if (t.linesWarn) {
          const stray = fc.asyncProperty(withGarbageLine(t.seeds), async ({ text, line }) => {
            runs++;
            const o = await w.run(text);
            slowest = Math.max(slowest, o.ms);
            check(o, text);
            expect(
              o.warnings!.some((x) => x.startsWith(`line ${line}:`)),
              `line ${line} of:\n${text}`,
            ).toBe(true);
          });
          await fc.assert(stray, {
            numRuns: Number.MAX_SAFE_INTEGER,
            interruptAfterTimeLimit: share,
            markInterruptAsFailure: false,
            endOnFailure: true,
          });
        }
        if (t.strayIgnored) {
          const stray = fc.asyncProperty(withGarbageLine(t.seeds), async ({ text, line }) => {
            runs++;
            const lines = text.split('\n');
            lines.splice(line - 1, 1);
            const [withLine, without] = [await w.run(text), await w.run(lines.join('\n'))];
            check(withLine, text);
            check(without, text);
            // entries carry their line number: compare what was read, not where
            const strip = (json: string) =>
              (JSON.parse(json) as { line: number }[]).map((e) => ({ ...e, line: 0 }));
            expect(strip(withLine.json!), `line ${line} of:\n${text}`).toEqual(
              strip(without.json!),
            );
          });
          await fc.assert(stray, {
            numRuns: Number.MAX_SAFE_INTEGER,
            interruptAfterTimeLimit: budget / 2,
            markInterruptAsFailure: false,
            endOnFailure: true,
          });
        }
        stats.push(
          `  ${t.name.padEnd(16)} ${String(runs).padStart(8)} inputs in ${((performance.now() - started) / 1000).toFixed(1)} s, slowest ${slowest.toFixed(1)} ms, ${refusals} refused with a typed error`,
        );
        expect(runs).toBeGreaterThan(0);
      },
      budget * 2 + 60_000,
    );
  }
});
