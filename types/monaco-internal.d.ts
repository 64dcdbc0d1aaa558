// Types for the few Monaco modules imported beyond its public editor API (the package ships
// declarations for editor.api only): its diff algorithm, run by the engine and by the page, and
// the classes a diff result is made of.
declare module 'monaco-editor/editor/common/diff/defaultLinesDiffComputer/defaultLinesDiffComputer' {
  import type { DetailedLineRangeMapping } from 'monaco-editor/editor/common/diff/rangeMapping';
  export interface LinesDiff {
    changes: readonly DetailedLineRangeMapping[];
    moves: readonly unknown[];
    hitTimeout: boolean;
  }
  export class DefaultLinesDiffComputer {
    computeDiff(
      originalLines: string[],
      modifiedLines: string[],
      options: {
        ignoreTrimWhitespace: boolean;
        maxComputationTimeMs: number;
        computeMoves: boolean;
      },
    ): LinesDiff;
  }
}

declare module 'monaco-editor/editor/common/diff/rangeMapping' {
  import type { LineRange } from 'monaco-editor/editor/common/core/ranges/lineRange';
  import type { Range } from 'monaco-editor/editor/common/core/range';
  export class RangeMapping {
    constructor(originalRange: Range, modifiedRange: Range);
    readonly originalRange: Range;
    readonly modifiedRange: Range;
  }
  export class DetailedLineRangeMapping {
    constructor(original: LineRange, modified: LineRange, innerChanges: RangeMapping[] | undefined);
    readonly original: LineRange;
    readonly modified: LineRange;
    readonly innerChanges: RangeMapping[] | undefined;
  }
}

declare module 'monaco-editor/editor/common/core/ranges/lineRange' {
  export class LineRange {
    constructor(startLineNumber: number, endLineNumberExclusive: number);
    readonly startLineNumber: number;
    readonly endLineNumberExclusive: number;
  }
}

declare module 'monaco-editor/editor/common/core/range' {
  export class Range {
    constructor(
      startLineNumber: number,
      startColumn: number,
      endLineNumber: number,
      endColumn: number,
    );
    readonly startLineNumber: number;
    readonly startColumn: number;
    readonly endLineNumber: number;
    readonly endColumn: number;
  }
}
