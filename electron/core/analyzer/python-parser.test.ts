// The parser's WebAssembly is found without Node's exports-map resolver (python-parser.ts): the
// file it finds must be the one require.resolve finds, and a package that maps the file
// elsewhere (or is not there) must still go to require.resolve.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../tests/support/temp';
import { exportedFile } from './python-parser';

describe('the parser runtime found by its package', () => {
  it('is the file require.resolve finds', () => {
    const require = createRequire(import.meta.url);
    expect(exportedFile(require, 'web-tree-sitter', './tree-sitter.wasm')).toBe(
      require.resolve('web-tree-sitter/tree-sitter.wasm'),
    );
  });

  it('follows an exports map that points elsewhere, and a package nearer than the root', () => {
    const root = tempDir();
    const pkg = (dir: string, exports: Record<string, string>) => {
      mkdirSync(join(dir, 'dist'), { recursive: true });
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'runtime', exports }));
      writeFileSync(join(dir, 'runtime.wasm'), '');
      writeFileSync(join(dir, 'dist', 'runtime.wasm'), '');
    };
    // the root's package maps the file to itself, the nested one (found first) elsewhere
    pkg(join(root, 'node_modules', 'runtime'), { './runtime.wasm': './runtime.wasm' });
    const app = join(root, 'app');
    pkg(join(app, 'node_modules', 'runtime'), { './runtime.wasm': './dist/runtime.wasm' });
    writeFileSync(join(app, 'index.js'), '');
    const nested = createRequire(join(app, 'index.js'));
    expect(exportedFile(nested, 'runtime', './runtime.wasm')).toBe(
      join(app, 'node_modules', 'runtime', 'dist', 'runtime.wasm'),
    );
    const atRoot = createRequire(join(root, 'index.js'));
    expect(exportedFile(atRoot, 'runtime', './runtime.wasm')).toBe(
      join(root, 'node_modules', 'runtime', 'runtime.wasm'),
    );
    expect(() => exportedFile(atRoot, 'missing-runtime', './runtime.wasm')).toThrow();
  });
});
