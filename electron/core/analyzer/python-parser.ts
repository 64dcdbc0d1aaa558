import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';

let language: Promise<Language> | undefined;

/** The tree-sitter Python grammar, loaded once from the installed package's wasm. */
function pythonLanguage(): Promise<Language> {
  language ??= (async () => {
    // V8's own WebAssembly tiers: baseline code first, the functions that stay hot optimised in
    // the background. Compiling everything optimised from the start (`--no-liftoff`, as this did)
    // cost every scan its parser's one large function (~0.5 G instructions, 37% of a 60-line
    // scan) and was no faster on a 217k-line tree. bin/amw.js tunes the tiers for one-shot runs.
    const require = createRequire(import.meta.url);
    // The runtime's WebAssembly named by its package, not found beside the script: the one-shot
    // CLI bundles web-tree-sitter's JavaScript (scripts/build.mjs), to run it from V8's code cache.
    const wasm = exportedFile(require, 'web-tree-sitter', './tree-sitter.wasm');
    await Parser.init({ locateFile: () => wasm });
    const pkg = require.resolve('tree-sitter-python/package.json');
    // read here, synchronously: given a path, web-tree-sitter reads it through fs/promises, which
    // starts libuv's thread pool (four threads) in a one-shot scan that uses it for nothing else
    return Language.load(readFileSync(join(dirname(pkg), 'tree-sitter-python.wasm')));
  })();
  return language;
}

/**
 * The file a package exports as `subpath`, as require.resolve finds it, without Node's resolver
 * of exports maps where the package maps the subpath to itself (web-tree-sitter does): loading
 * and running that resolver the first time was ~3.4 ms of every one-shot `amw scan`. The package
 * is the one Node would load (the first node_modules folder on the search path that holds it);
 * any other mapping, or no package found, goes to require.resolve.
 */
export function exportedFile(require: NodeRequire, pkg: string, subpath: string): string {
  for (const dir of require.resolve.paths(pkg) ?? []) {
    let manifest: string;
    try {
      manifest = readFileSync(join(dir, pkg, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    const exports = (JSON.parse(manifest) as { exports?: unknown }).exports;
    const target =
      exports && typeof exports === 'object' ? (exports as Record<string, unknown>)[subpath] : null;
    if (target === subpath) return join(dir, pkg, subpath);
    break;
  }
  return require.resolve(`${pkg}/${subpath.slice(2)}`);
}

/** A parser for Python source; parse errors are part of the tree (`hasError`), never thrown. */
export async function pythonParser(): Promise<Parser> {
  const lang = await pythonLanguage(); // runs Parser.init() first
  const parser = new Parser();
  parser.setLanguage(lang);
  return parser;
}
