// Monaco's diff editor gets its diffs from here instead of its editor worker: the engine's line
// diff (shared/diff), shipped with the file for the review's first view and run on the page after
// an edit or a rejected change. Copying both texts to the worker and back costs more than that
// diff does, and one algorithm throughout keeps the changes from shifting between the two.
import {
  DetailedLineRangeMapping,
  RangeMapping,
} from 'monaco-editor/editor/common/diff/rangeMapping';
import { LineRange } from 'monaco-editor/editor/common/core/ranges/lineRange';
import { Range } from 'monaco-editor/editor/common/core/range';
import type * as MonacoApi from 'monaco-editor/editor/editor.api';
import type { DiffChange } from '../../../shared/api';
import { lineDiff } from '../../../shared/diff/line-diff';

type Model = MonacoApi.editor.ITextModel;
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
        c[4].map(
          (r) =>
            new RangeMapping(new Range(r[0], r[1], r[2], r[3]), new Range(r[4], r[5], r[6], r[7])),
        ),
      ),
  );

const provider = {
  onDidChange: () => ({ dispose() {} }),
  dispose() {},
  computeDiff(original: Model, modified: Model) {
    const seed = seeded.get(modified);
    const fresh =
      seed &&
      seed.original === original &&
      seed.originalVersion === original.getAlternativeVersionId() &&
      seed.version === modified.getAlternativeVersionId();
    const changes = fresh ? seed.changes : lineDiff(original.getValue(), modified.getValue());
    return Promise.resolve({
      identical: changes.length === 0,
      quitEarly: false,
      changes: toMappings(changes),
      moves: [],
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
