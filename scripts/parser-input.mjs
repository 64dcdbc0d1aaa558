// web-tree-sitter hands the parser its input through a JavaScript callback that copies each chunk
// into WebAssembly memory one UTF-16 unit at a time, each a call through a DataView helper
// (LE_HEAP_STORE_I16), and stores the chunk's length through setValue's switch on a type name.
// A 217k-line one-shot scan reads 1.4 M characters that way in 18k calls: 3-4% of its CPU,
// mostly before V8 has optimised the loop. The bundle the one-shot CLI runs gets the same copy
// written straight into the Uint16Array view of that memory where the platform is little-endian
// (the DataView helpers exist for big-endian hosts, which keep the original loop).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** [what web-tree-sitter 0.25 writes, what the bundle gets instead] */
const EDITS = [
  [
    `          for (var i2 = 0; i2 < numCharsToWrite; ++i2) {
            var codeUnit = str.charCodeAt(i2);
            LE_HEAP_STORE_I16((outPtr >> 1) * 2, codeUnit);
            outPtr += 2;
          }`,
    `          if (AMW_LITTLE_ENDIAN) {
            for (var base = outPtr >> 1, i2 = 0; i2 < numCharsToWrite; ++i2)
              HEAPU16[base + i2] = str.charCodeAt(i2);
            outPtr += numCharsToWrite * 2;
          } else
          for (var i2 = 0; i2 < numCharsToWrite; ++i2) {
            var codeUnit = str.charCodeAt(i2);
            LE_HEAP_STORE_I16((outPtr >> 1) * 2, codeUnit);
            outPtr += 2;
          }`,
  ],
  [
    `          if (typeof string === "string") {
            setValue(lengthAddress, string.length, "i32");`,
    `          if (typeof string === "string") {
            LE_HEAP_STORE_I32((lengthAddress >> 2) * 4, string.length);`,
  ],
  [
    `        var stringToUTF16 = `,
    `        var AMW_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
        var stringToUTF16 = `,
  ],
];

/** The esbuild plugin that applies EDITS to web-tree-sitter's CommonJS file; a miss fails the build. */
export function parserInput() {
  const file = createRequire(import.meta.url).resolve('web-tree-sitter');
  return {
    name: 'parser-input',
    setup(build) {
      build.onLoad({ filter: /tree-sitter\.cjs$/ }, (args) => {
        if (args.path !== file) return undefined;
        let source = readFileSync(file, 'utf8');
        for (const [from, to] of EDITS) {
          if (source.split(from).length !== 2)
            throw new Error(
              `scripts/parser-input.mjs: web-tree-sitter changed (${JSON.stringify(from.trim().slice(0, 60))} not found once): update the edits or drop them`,
            );
          source = source.replace(from, () => to);
        }
        return { contents: source, loader: 'js' };
      });
    },
  };
}
