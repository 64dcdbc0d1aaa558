// Monaco's diff editor gets its diffs from here instead of its editor worker. The diff a review
// opens with comes computed by the engine (same algorithm, shipped with the file); later ones
// (after a hand edit or a rejected change) are computed on the page, which for a review's file
// sizes costs less than copying both texts to the worker and back.
import { DefaultLinesDiffComputer } from 'monaco-editor/editor/common/diff/defaultLinesDiffComputer/defaultLinesDiffComputer';
import {
  DetailedLineRangeMapping,
  RangeMapping,
} from 'monaco-editor/editor/common/diff/rangeMapping';
import { LineRange } from 'monaco-editor/editor/common/core/ranges/lineRange';
import { Range } from 'monaco-editor/editor/common/core/range';
import type * as MonacoApi from 'monaco-editor/editor/editor.api';
import type { DiffChange } from '../../../shared/api';

type Model = MonacoApi.editor.ITextModel;
interface Options {
  ignoreTrimWhitespace: boolean;
  maxComputationTimeMs: number;
  computeMoves: boolean;
}

const computer = new DefaultLinesDiffComputer();

/** Diffs known for a pair of models at given versions (the engine's, at open). */
const seeded = new WeakMap<
  Model,
  { original: Model; originalVersion: number; version: number; changes: DiffChange[] }
>();

/** Registers the engine's diff for these two models as they are now. */
export function seedDiff(original: Model, modified: Model, changes: DiffChange[]): void {
  seeded.set(modified, {
    original,
    originalVersion: original.getAlternativeVersionId(),
    version: modified.getAlternativeVersionId(),
    changes,
  });
}

const toMappings = (changes: DiffChange[]) =>
  changes.map(
    (c) =>
      new DetailedLineRangeMapping(
        new LineRange(c[0], c[1]),
        new LineRange(c[2], c[3]),
        c[4]?.map(
          (r) =>
            new RangeMapping(new Range(r[0], r[1], r[2], r[3]), new Range(r[4], r[5], r[6], r[7])),
        ),
      ),
  );

const provider = {
  onDidChange: () => ({ dispose() {} }),
  dispose() {},
  computeDiff(original: Model, modified: Model, options: Options) {
    const seed = seeded.get(modified);
    if (
      seed &&
      seed.original === original &&
      seed.originalVersion === original.getAlternativeVersionId() &&
      seed.version === modified.getAlternativeVersionId()
    ) {
      return Promise.resolve({
        identical: seed.changes.length === 0 && original.getValue() === modified.getValue(),
        quitEarly: false,
        changes: toMappings(seed.changes),
        moves: [],
      });
    }
    const a = original.getLinesContent();
    const b = modified.getLinesContent();
    const result = computer.computeDiff(a, b, options);
    return Promise.resolve({
      identical:
        result.changes.length === 0 && a.length === b.length && a.every((l, i) => l === b[i]),
      quitEarly: result.hitTimeout,
      changes: result.changes,
      moves: result.moves,
    });
  },
};

/**
 * Monaco's diff-provider service, replaced for every diff editor (createDiffEditor's third
 * argument; Monaco takes service overrides when its services start, at the first editor, and the
 * diff editor is the only kind the app creates).
 */
export const pageDiffServices = {
  diffProviderFactoryService: { createDiffProvider: () => provider },
};
