// web-tree-sitter's JavaScript glue moves data in and out of WebAssembly memory through DataView
// helpers (LE_HEAP_STORE_I16 and the like, written for big-endian hosts too) and through
// getValue/setValue, which test and switch on a type name at every call:
// - the parser's input is copied one UTF-16 unit at a time, a helper call each (a 217k-line
//   one-shot scan copies 1.4 M characters in 18k reads): Node's Buffer copies it in one call;
// - every node the analysis reads (its parent, a child, a descendant) is written and read back
//   as five 32-bit integers, each a getValue or setValue call, and made as a class whose seven
//   fields are each defined as it is made.
// Mostly run before V8 has optimised them, they were 5-6% of that scan's CPU. The bundle the
// one-shot CLI runs (Node only) gets the same reads and writes through a Buffer and the
// Int32Array view of that memory where the platform is little-endian; a big-endian host keeps
// the original code.
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
            // one native copy of the code units as they are (the bundle runs in Node only)
            if (AMW_HEAP_BYTES === null || AMW_HEAP_BYTES.buffer !== HEAPU8.buffer)
              AMW_HEAP_BYTES = Buffer.from(HEAPU8.buffer);
            // Buffer's own UTF-16 writer where Node has it: write() checks its arguments
            // through helpers that allocate at every call (18k calls in a 217k-line scan)
            if (typeof AMW_HEAP_BYTES.ucs2Write === "function")
              AMW_HEAP_BYTES.ucs2Write(str, outPtr, numCharsToWrite * 2);
            else AMW_HEAP_BYTES.write(str, outPtr, numCharsToWrite * 2, "utf16le");
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
    `        var HEAP, HEAP8, HEAPU8, HEAP16, HEAPU16, HEAP32, HEAPU32, HEAPF32, HEAP64, HEAPU64, HEAPF64;
`,
    `        var HEAP, HEAP8, HEAPU8, HEAP16, HEAPU16, HEAP32, HEAPU32, HEAPF32, HEAP64, HEAPU64, HEAPF64;
        // read before anything else runs (undefined before: the original code runs)
        var AMW_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
        var AMW_HEAP_BYTES = null;
`,
  ],
  [
    `        function getValue(ptr, type = "i8") {
`,
    `        function getValue(ptr, type = "i8") {
          if (type === "i32" && AMW_LITTLE_ENDIAN) return HEAP32[ptr >> 2];
`,
  ],
  [
    `        function setValue(ptr, value, type = "i8") {
`,
    `        function setValue(ptr, value, type = "i8") {
          if (type === "i32" && AMW_LITTLE_ENDIAN) {
            HEAP32[ptr >> 2] = value;
            return;
          }
`,
  ],
  // every node the analysis reads is a new Node: its seven class fields, each defined as the
  // object is made, become assignments in the same order (the same own properties)
  [
    `  /** @internal */
  // @ts-expect-error: never read
  [0] = 0;
  // Internal handle for Wasm
  /** @internal */
  _children;
  /** @internal */
  _namedChildren;
  /** @internal */
  constructor(internal, {
    id,
    tree,
    startIndex,
    startPosition,
    other
  }) {
    assertInternal(internal);
    this[0] = other;
    this.id = id;
    this.tree = tree;
    this.startIndex = startIndex;
    this.startPosition = startPosition;
  }`,
    `  constructor(internal, { id, tree, startIndex, startPosition, other }) {
    assertInternal(internal);
    this[0] = other;
    this._children = undefined;
    this._namedChildren = undefined;
    this.id = id;
    this.startIndex = startIndex;
    this.startPosition = startPosition;
    this.tree = tree;
  }`,
  ],
  [
    `  id;
  /** The byte index where this node starts. */
  startIndex;
  /** The position where this node starts. */
  startPosition;
  /** The tree that this node belongs to. */
  tree;
`,
    '',
  ],
];

/** The esbuild plugin that applies EDITS to web-tree-sitter's CommonJS file; a miss fails the build. */
export function treeSitterGlue() {
  const file = createRequire(import.meta.url).resolve('web-tree-sitter');
  return {
    name: 'tree-sitter-glue',
    setup(build) {
      build.onLoad({ filter: /tree-sitter\.cjs$/ }, (args) => {
        if (args.path !== file) return undefined;
        let source = readFileSync(file, 'utf8');
        for (const [from, to] of EDITS) {
          if (source.split(from).length !== 2)
            throw new Error(
              `scripts/tree-sitter-glue.mjs: web-tree-sitter changed (${JSON.stringify(from.trim().slice(0, 60))} not found once): update the edits or drop them`,
            );
          source = source.replace(from, () => to);
        }
        return { contents: source, loader: 'js' };
      });
    },
  };
}
