import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Language, Parser } from 'web-tree-sitter';

let language: Promise<Language> | undefined;

/** The tree-sitter Python grammar, loaded once from the installed package's wasm. */
function pythonLanguage(): Promise<Language> {
  language ??= (async () => {
    // Compile the parser's WebAssembly with the optimising tier from the start: V8's default
    // (baseline code first, optimised later in the background) leaves a one-shot `amw scan`
    // parsing with slow code for most of its run — a quarter more CPU on a 400k-line tree.
    // Process-wide, but tree-sitter is the only WebAssembly this side of the app compiles.
    setFlagsFromString('--no-liftoff');
    const require = createRequire(import.meta.url);
    // The runtime's WebAssembly named by its package, not found beside the script: the one-shot
    // CLI bundles web-tree-sitter's JavaScript (scripts/build.mjs), to run it from V8's code cache.
    const wasm = require.resolve('web-tree-sitter/tree-sitter.wasm');
    await Parser.init({ locateFile: () => wasm });
    const pkg = require.resolve('tree-sitter-python/package.json');
    return Language.load(join(dirname(pkg), 'tree-sitter-python.wasm'));
  })();
  return language;
}

/** A parser for Python source; parse errors are part of the tree (`hasError`), never thrown. */
export async function pythonParser(): Promise<Parser> {
  const lang = await pythonLanguage(); // runs Parser.init() first
  const parser = new Parser();
  parser.setLanguage(lang);
  return parser;
}
