// One diff editor for the page, reused from file to file: building Monaco's two editors and their
// DOM costs a tenth of a second on the first open of a large file, and a review opens many files.
// Each review mounts the editor's own container into its host and hands it back when it unmounts.
import type * as MonacoApi from 'monaco-editor/editor/editor.api';
import type { Monaco } from './load';
import { pageDiffServices } from './diff-provider';

type DiffEditor = MonacoApi.editor.IStandaloneDiffEditor;
type Options = MonacoApi.editor.IStandaloneDiffEditorConstructionOptions;

let idle: { diff: DiffEditor; container: HTMLDivElement } | null = null;

export interface Lease {
  diff: DiffEditor;
  /** Empties the editor and keeps it for the next file (the caller disposes its own models). */
  release(): void;
}

/** The page's diff editor, mounted into `host` with these options. */
export function leaseDiffEditor(monaco: Monaco, host: HTMLElement, options: Options): Lease {
  let entry = idle;
  idle = null;
  if (entry) {
    host.append(entry.container);
    entry.diff.updateOptions(options);
  } else {
    const container = document.createElement('div');
    container.className = 'monaco-container';
    host.append(container);
    entry = {
      container,
      diff: monaco.editor.createDiffEditor(container, options, pageDiffServices),
    };
  }
  const { diff, container } = entry;
  return {
    diff,
    release() {
      diff.setModel(null);
      container.remove();
      // a second lease while this one was out (two reviews at once) keeps its own editor
      if (idle) diff.dispose();
      else idle = { diff, container };
    },
  };
}
