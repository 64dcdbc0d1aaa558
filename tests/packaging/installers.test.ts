// What can be checked of the installers without an Electron runtime or the OS toolchains: the
// electron-builder config against the schema electron-builder ships, every file it names, and the
// release workflow. Building and running the installers happens on hosted runners (release.yml).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appRoot } from '../../electron/core/paths';
import { reportPathsFrom } from '../../electron/main/open-report';
import { tempDir } from '../support/temp';
import { writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const root = appRoot();
const read = (p: string) => readFileSync(join(root, p), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  main: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
interface BuilderConfig {
  files: string[];
  asarUnpack: string[];
  npmRebuild: boolean;
  publish: unknown;
  directories: { output: string; buildResources: string };
  fileAssociations: { ext: string; icon: string; mimeType: string }[];
  linux: { target: string[]; icon: string; mimeTypes: string[] };
  win: { target: string[]; icon: string };
  mac: { target: string[]; icon: string };
}
const config = JSON.parse(read('electron-builder.json')) as BuilderConfig;

function validator() {
  const Ajv = (require('ajv2020') as { default: new (o: object) => AjvLike }).default;
  const schema: unknown = JSON.parse(
    readFileSync(require.resolve('app-builder-lib/scheme.json'), 'utf8'),
  );
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}
interface AjvLike {
  compile(schema: unknown): ((data: unknown) => boolean) & { errors?: unknown[] | null };
}

/** The subset of glob electron-builder's `files` uses here: `dir/**\/*`, `*.ext`, negation. */
function covered(patterns: string[], file: string): boolean {
  let inside = false;
  for (const p of patterns) {
    const neg = p.startsWith('!');
    const body = neg ? p.slice(1) : p;
    const re = new RegExp(
      `^${body
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .split('**/')
        .map((a) =>
          a
            .split('**')
            .map((b) => b.replace(/\*/g, '[^/]*'))
            .join('.*'),
        )
        .join('(?:.*/)?')}$`,
    );
    if (re.test(file)) inside = !neg;
  }
  return inside;
}

describe('electron-builder config (electron-builder.json)', () => {
  it('is valid against the JSON schema electron-builder ships, and the check bites', () => {
    const validate = validator();
    expect(validate(config), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...config, linx: { target: ['deb'] } })).toBe(false);
    expect(validate({ ...config, nsis: { oneClik: false } })).toBe(false);
  });

  it('builds AppImage, deb, rpm, NSIS and dmg', () => {
    expect(config.linux.target).toEqual(['AppImage', 'deb', 'rpm']);
    expect(config.win.target).toEqual(['nsis']);
    expect(config.mac.target).toEqual(['dmg']);
  });

  it('every file it names exists; the app entry, probes, knowledge and migrations are packed', () => {
    for (const p of [
      config.directories.buildResources,
      config.linux.icon,
      config.win.icon,
      config.mac.icon,
      ...config.fileAssociations.map((f) => f.icon),
    ])
      expect(existsSync(join(root, p)), p).toBe(true);
    // icons: electron-builder derives .ico/.icns from a PNG of at least 512×512
    const png = readFileSync(join(root, config.mac.icon));
    expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(512);
    for (const f of [
      'package.json',
      pkg.main,
      'dist/preload.cjs',
      'dist/renderer/index.html',
      'dist/scan-worker.js',
      'resources/probes/inventory.sh',
      'resources/knowledge/doctor/hccl.json',
      'resources/icons/icon.png',
      'electron/core/db/migrations/0001_initial.sql',
    ])
      expect(covered(config.files, f), f).toBe(true);
    expect(covered(config.files, 'dist/main.js.map')).toBe(false);
    expect(covered(config.files, 'electron/core/api/core.ts')).toBe(false);
    // the globs' roots are real
    for (const dir of ['resources', 'electron/core/db/migrations'])
      expect(statSync(join(root, dir)).isDirectory()).toBe(true);
  });

  it('rebuilds better-sqlite3 for Electrons ABI at package time and unpacks it from the asar', () => {
    expect(config.npmRebuild).toBe(true);
    expect(pkg.dependencies['better-sqlite3']).toBeDefined();
    expect(config.asarUnpack).toContain('node_modules/better-sqlite3/**');
    // electron-builder refuses electron among the dependencies, and pins it from devDependencies
    expect(pkg.dependencies.electron).toBeUndefined();
    expect(pkg.devDependencies.electron).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies['electron-builder']).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('writes no auto-update metadata unless someone configures publishing', () => {
    expect(config.publish).toBeNull();
    expect(pkg.dependencies['electron-updater']).toBeUndefined();
  });

  it('associates exported .amw.json reports, which is what the JSON export is named', async () => {
    expect(config.fileAssociations.map((f) => f.ext)).toEqual(['amw.json']);
    expect(config.linux.mimeTypes).toContain(config.fileAssociations[0]!.mimeType);
    expect(read('electron/core/reports/export.ts')).toContain('`${base}.amw.json`');
    const dir = tempDir();
    writeFileSync(join(dir, 'amw-report-1-x.amw.json'), '{}');
    writeFileSync(join(dir, 'other.json'), '{}');
    expect(
      reportPathsFrom(['--inspect', 'amw-report-1-x.amw.json', 'other.json', 'gone.amw.json'], dir),
    ).toEqual([join(dir, 'amw-report-1-x.amw.json')]);
  });
});

describe('release workflow (.github/workflows/release.yml)', () => {
  const yaml = require('js-yaml') as { load(text: string): unknown };
  const wf = yaml.load(read('.github/workflows/release.yml')) as {
    on: { push: { tags: string[] } };
    jobs: Record<
      string,
      {
        'runs-on': string;
        needs?: string;
        strategy?: { matrix: { include: { os: string; targets: string }[] } };
        steps: { run?: string; uses?: string; if?: string; with?: Record<string, unknown> }[];
      }
    >;
  };

  it('parses, runs on version tags, and builds on a hosted runner of each OS', () => {
    expect(wf.on.push.tags).toEqual(['v*']);
    const include = wf.jobs.installers!.strategy!.matrix.include;
    const os = include.map((i) => i.os);
    expect(os.some((o) => o.startsWith('ubuntu-'))).toBe(true);
    expect(os.some((o) => o.startsWith('windows-'))).toBe(true);
    expect(os.some((o) => o.startsWith('macos-'))).toBe(true);
    // together the runners build exactly the targets the config declares
    const targets = include.flatMap((i) =>
      i.targets.split(/\s+/).filter((t) => !t.startsWith('--')),
    );
    expect(targets.sort()).toEqual(
      [...config.linux.target, ...config.win.target, ...config.mac.target].sort(),
    );
  });

  it('runs the Electron e2e project there, then packages with this config', () => {
    const runs = wf.jobs.installers!.steps.map((s) => s.run ?? '');
    const e2e = runs.findIndex((r) => /playwright test --project electron/.test(r));
    const pack = runs.findIndex((r) =>
      r.includes('electron-builder --config electron-builder.json'),
    );
    expect(e2e).toBeGreaterThan(-1);
    expect(pack).toBeGreaterThan(e2e);
    expect(runs.some((r) => /npm run build\b/.test(r))).toBe(true);
    expect(pkg.scripts.build).toBeDefined();
    // every npm script the workflow runs exists
    for (const r of runs)
      for (const m of r.matchAll(/npm run (\S+)/g)) expect(pkg.scripts[m[1]!], m[1]).toBeDefined();
  });

  it('uploads every installer kind and attaches them to the tagged release', () => {
    const upload = wf.jobs.installers!.steps.find((s) =>
      s.uses?.startsWith('actions/upload-artifact'),
    );
    const paths = String(upload?.with?.path);
    for (const ext of ['AppImage', 'deb', 'rpm', 'exe', 'dmg'])
      expect(paths).toContain(`release/*.${ext}`);
    expect(paths).toContain(config.directories.output);
    const release = wf.jobs.release!;
    expect(release.needs).toBe('installers');
    expect(release.steps.map((s) => s.run ?? '').join('\n')).toMatch(/gh release upload/);
  });
});
