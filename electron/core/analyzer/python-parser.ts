import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Language, Parser } from 'web-tree-sitter';

let language: Promise<Language> | undefined;

/** The tree-sitter Python grammar, loaded once from the installed package's wasm. */
function pythonLanguage(): Promise<Language> {
  language ??= (async () => {
    await Parser.init();
    const pkg = createRequire(import.meta.url).resolve('tree-sitter-python/package.json');
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
