import { useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CodeFileContent, CodeFinding, Language, ReviewState } from '../../../../shared/api';
import { loadMonaco, type Monaco } from '../../monaco/load';
import { seedDiff } from '../../monaco/diff-provider';
import { leaseDiffEditor } from '../../monaco/diff-editor-pool';
import { takeFileRequested } from './open-timing';
import { useText } from '../../i18n';
import { findingText } from './finding-text';
import { partialAcceptance, withoutRejected } from './partial-review';
import { lineDiff } from '../../../../shared/diff/line-diff';
import type * as MonacoApi from 'monaco-editor/editor/editor.api';

type LineChange = MonacoApi.editor.ILineChange;
type DiffEditor = MonacoApi.editor.IStandaloneDiffEditor;

/** A hunk is named by its lines on the original side, which reverting other hunks never moves. */
const hunkKey = (h: LineChange) => `${h.originalStartLineNumber}:${h.originalEndLineNumber}`;

/** What a rejection changed, so "Undo reject" can put it all back. */
interface BeforeReject {
  /** The changes rejected one by one before it. */
  rejected: Set<string>;
  /** Absent: the accepted changes stay as they are (a rejection restored on reopening). */
  accepted?: Set<string>;
  putBack: number;
  review: ReviewState;
  text?: string;
  handEdited: boolean;
  ownText: boolean;
  /**
   * The right-hand side to put back, for a rejection restored on reopening (the editor has no
   * undo step for it); absent, the rejection is the editor's last undo step.
   */
  right?: string;
}

const languageOf = (file: string) =>
  file.endsWith('.py') ? 'python' : /\.(sh|bash)$/.test(file) ? 'shell' : 'plaintext';

export interface ReviewEditorProps {
  content: CodeFileContent;
  /** The file's findings: markers on the original side, explained on hover. */
  findings: CodeFinding[];
  lang: Language;
  /**
   * Saves a decision; `text` is the right-hand side as it stands, `rejected` the changes rejected
   * one by one (kept so a reopened file shows them rejected).
   */
  onReview: (review: ReviewState, text?: string, rejected?: string[]) => void;
  readOnly?: boolean;
  /** A line of the original to show first (arriving from an op's source line). */
  revealLine?: number | null;
}

/** The whole text replaced as one step of the editor's own undo stack (setValue clears it). */
function replaceAll(m: MonacoApi.editor.ITextModel, text: string): void {
  m.pushStackElement();
  m.pushEditOperations([], [{ range: m.getFullModelRange(), text }], () => null);
  m.pushStackElement();
}

/**
 * Monaco's diff editor, original ↔ migrated, with the findings as markers on the original side
 * and per-hunk accept/reject. Rejecting a hunk puts the original lines back on the right; hand
 * edits on the right are kept as an "edited" review.
 */
export function ReviewEditor(props: ReviewEditorProps) {
  const { t } = useTranslation();
  const say = useText();
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<DiffEditor | null>(null);
  const monacoRef = useRef<Monaco | null>(null);
  const [hunks, setHunks] = useState<LineChange[]>([]);
  const [accepted, setAccepted] = useState<Set<string>>(new Set());
  // a rejected change leaves the diff (its original lines are back): the count says how many
  // went, so "7 changes" does not read as a proposal of seven
  const [putBack, setPutBack] = useState(0);
  const [ready, setReady] = useState(false);
  const [cursor, setCursor] = useState(0);
  const [loadError, setLoadError] = useState<string | null>(null);
  const saveTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const pendingSave = useRef<(() => void) | null>(null);
  const ours = useRef(false); // content changes we make ourselves are saved by their own action
  const handEdited = useRef(false);
  /** The file was saved with a text of the reviewer's own (reopened: not the proposal's parts). */
  const ownText = useRef(false);
  const onReview = useRef(props.onReview);
  onReview.current = props.onReview;
  const { content } = props;
  // the review as last saved, and the rejections that can still be undone (latest last): a
  // change rejected by mistake was gone from the stepper, only "Reset" brought it back
  const saved = useRef<{ review: ReviewState; text?: string }>({
    review: content.review,
    text: content.reviewed ?? undefined,
  });
  const [undoable, setUndoable] = useState<BeforeReject[]>([]);
  /** The changes rejected one by one, by key: saved with every decision. */
  const rejected = useRef<Set<string>>(new Set(content.rejected));
  const save = (review: ReviewState, text?: string) => {
    saved.current = { review, text };
    onReview.current(review, text, [...rejected.current]);
  };

  useEffect(() => {
    let disposed = false;
    const started = takeFileRequested(performance.now());
    const disposables: { dispose(): void }[] = [];
    loadMonaco(props.lang)
      .then((monaco) => {
        if (disposed || !host.current) return;
        monacoRef.current = monaco;
        // Monaco's theme is global: set it now (a pooled editor keeps the one it was made with)
        // and follow <html data-theme> as the app's theme changes
        const themeOf = () =>
          document.documentElement.dataset.theme === 'dark' ? 'vs-dark' : 'vs';
        monaco.editor.setTheme(themeOf());
        const themeWatch = new MutationObserver(() => monaco.editor.setTheme(themeOf()));
        themeWatch.observe(document.documentElement, { attributeFilter: ['data-theme'] });
        disposables.push({ dispose: () => themeWatch.disconnect() });
        const dark = themeOf() === 'vs-dark';
        const lease = leaseDiffEditor(monaco, host.current, {
          automaticLayout: true,
          readOnly: !!props.readOnly,
          originalEditable: false,
          renderSideBySide: true,
          useInlineViewWhenSpaceIsLimited: false,
          theme: dark ? 'vs-dark' : 'vs',
          fontSize: 13,
          minimap: { enabled: false },
          scrollBeyondLastLine: false,
          renderMarginRevertIcon: false,
          ignoreTrimWhitespace: false,
          maxComputationTime: 0, // the whole diff, even for a 10k-line file

          // per-change accept/reject is ours (the navigator above); Monaco's gutter menu and its
          // overview ruler cost ~40% of opening a 10k-line diff with hundreds of changes
          renderGutterMenu: false,
          renderOverviewRuler: false,
          // editing aids a review hardly needs, each a pass over a long file as it opens
          // (~50 ms on 10k lines): folding ranges, word occurrences, brackets, line highlight
          folding: false,
          matchBrackets: 'never',
          occurrencesHighlight: 'off',
          selectionHighlight: false,
          renderLineHighlight: 'none',
        });
        const diff = lease.diff;
        const language = languageOf(content.file);
        // colouring a long file competes with the first diff for the main thread: show the diff
        // first, then switch the grammar on
        const lateColour = content.original.length > 100_000;
        const initial = lateColour ? 'plaintext' : language;
        const original = monaco.editor.createModel(content.original, initial);
        // a file accepted part way opens on the proposal, its accepted changes marked, so the
        // changes still to decide are there to decide
        const partial =
          content.review === 'edited' && content.reviewed !== null
            ? partialAcceptance(content.original, content.proposed, content.reviewed)
            : null;
        ownText.current = content.review === 'edited' && content.reviewed !== null && !partial;
        // …and the changes rejected one by one stay rejected (not back as undecided)
        // (a change the saved text takes is not rejected, whatever the list says)
        const restored =
          partial || content.review === 'pending'
            ? withoutRejected(
                content.original,
                content.proposed,
                new Set([...rejected.current].filter((k) => !partial?.accepted.has(k))),
              )
            : null;
        if (restored) {
          // each one can still be undone, the last rejected first, as before the reload (the
          // stored list is in the order they were rejected; `kept` is in the file's order, and
          // saved as it is it lost that order at the next reload)
          const keys = content.rejected.filter((k) => restored.kept.has(k));
          rejected.current = new Set(keys);
          setPutBack(keys.length);
          setUndoable(
            keys.map((_, i) => ({
              rejected: new Set(keys.slice(0, i)),
              putBack: i,
              review: content.review,
              text: content.reviewed ?? undefined,
              handEdited: false,
              ownText: false,
              right: withoutRejected(content.original, content.proposed, new Set(keys.slice(0, i)))
                .text,
            })),
          );
        }
        const start = restored
          ? restored.text
          : (content.reviewed ??
            (content.review === 'rejected' ? content.original : content.proposed));
        const modified = monaco.editor.createModel(start, initial);
        // the engine diffed the same two texts (the page, for a proposal reopened): no diff to
        // wait for
        seedDiff(
          original,
          modified,
          partial || restored?.kept.size ? lineDiff(content.original, start) : content.diff,
        );
        diff.setModel({ original, modified });
        // Monaco hides markers in read-only editors by default; the original side is read-only
        diff.getOriginalEditor().updateOptions({ renderValidationDecorations: 'on' });
        // the findings as markers, once the diff is on screen (hundreds of them would hold up
        // its first frame)
        const showMarkers = () =>
          monaco.editor.setModelMarkers(
            original,
            'amw',
            props.findings.map((f) => ({
              severity:
                f.severity === 'error'
                  ? monaco.MarkerSeverity.Error
                  : f.severity === 'warning'
                    ? monaco.MarkerSeverity.Warning
                    : monaco.MarkerSeverity.Info,
              message: findingText(f, say, '\n→ '),
              code: f.ruleId,
              source: 'amw',
              startLineNumber: f.line,
              startColumn: f.column,
              endLineNumber: f.endLine,
              endColumn: Math.max(f.endColumn, f.column + 1),
            })),
          );
        let first = true;
        // undone in reverse: our listeners first, then the editor goes back to the page's pool
        // (emptied), then the models
        disposables.push(original, modified, { dispose: () => lease.release() });
        disposables.push(
          diff.onDidUpdateDiff(() => {
            const changes = diff.getLineChanges() ?? [];
            setHunks(changes);
            if (first) {
              first = false;
              // a file reviewed before opens with the changes its text took marked accepted
              if (partial)
                setAccepted(new Set(changes.map(hunkKey).filter((k) => partial.accepted.has(k))));
              else if (content.review === 'accepted' || content.review === 'edited')
                setAccepted(new Set(changes.map(hunkKey)));
              // ready once the frame showing the diff is painted (a task queued from the
              // animation frame runs after it): from the click to here is how long this file
              // took to open, for the bench, the e2e trace and the curious
              requestAnimationFrame(() =>
                setTimeout(() => {
                  if (disposed) return;
                  showMarkers();
                  host.current?.setAttribute(
                    'data-diff-ms',
                    String(Math.round(performance.now() - started)),
                  );
                  setReady(true);
                  // opened at its first change, not at line 1 a long file's changes may be far
                  // from (a line asked for is shown instead, below)
                  const firstChange = changes[0];
                  if (firstChange && !props.revealLine) {
                    const line = Math.max(firstChange.modifiedStartLineNumber, 1);
                    diff.getModifiedEditor().revealLineInCenterIfOutsideViewport(line);
                  }
                  if (lateColour) {
                    monaco.editor.setModelLanguage(original, language);
                    monaco.editor.setModelLanguage(modified, language);
                  }
                }),
              );
            }
          }),
          modified.onDidChangeContent(() => {
            if (ours.current) return;
            handEdited.current = true;
            // undoing a rejection now would take the hand edit with it; the text is the review
            // now (an undo in the editor may have brought a rejected change back)
            setUndoable([]);
            rejected.current = new Set();
            clearTimeout(saveTimer.current);
            const saveEdit = () => {
              pendingSave.current = null;
              save('edited', modified.getValue());
            };
            pendingSave.current = saveEdit;
            saveTimer.current = setTimeout(saveEdit, 600);
          }),
        );
        editor.current = diff;
      })
      .catch((err: unknown) => setLoadError(String(err)));
    return () => {
      disposed = true;
      clearTimeout(saveTimer.current);
      // an edit typed just before leaving the file is saved now, not dropped
      pendingSave.current?.();
      for (const d of disposables.reverse()) d.dispose();
      editor.current = null;
    };
    // mounted once per file (the parent keys it): saving a review must not rebuild the editor
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // the line asked for (an op's source line, a finding clicked below), once the diff shows
  useEffect(() => {
    const diff = editor.current;
    const monaco = monacoRef.current;
    const line = props.revealLine;
    if (!ready || !diff || !monaco || !line) return;
    const ed = diff.getOriginalEditor();
    const model = ed.getModel();
    if (!model || line > model.getLineCount()) return;
    ed.revealLineInCenter(line);
    ed.setSelection(new monaco.Range(line, 1, line, model.getLineMaxColumn(line)));
  }, [ready, props.revealLine]);

  const modifiedModel = () => editor.current?.getModel()?.modified ?? null;
  const originalLines = (h: LineChange) => {
    const o = editor.current!.getModel()!.original;
    const lines: string[] = [];
    for (let i = h.originalStartLineNumber; i <= h.originalEndLineNumber; i++)
      lines.push(o.getLineContent(i));
    return lines;
  };

  /** What a reject changes, kept for Undo (taken before it: an updater would run after its save). */
  const pushUndo = () => {
    const before: BeforeReject = {
      rejected: new Set(rejected.current),
      accepted,
      putBack,
      ...saved.current,
      handEdited: handEdited.current,
      ownText: ownText.current,
    };
    setUndoable((u) => [...u, before]);
  };

  /** Puts the original lines of one hunk back on the right-hand side. */
  const reject = (h: LineChange) => {
    const monaco = monacoRef.current;
    const m = modifiedModel();
    if (!monaco || !m) return;
    const eol = m.getEOL();
    let range: MonacoApi.IRange;
    let text: string;
    if (h.modifiedEndLineNumber === 0) {
      // lines only the original has: insert them after modifiedStartLineNumber
      const after = h.modifiedStartLineNumber;
      const col = after === 0 ? 1 : m.getLineMaxColumn(after);
      range = new monaco.Range(Math.max(after, 1), after === 0 ? 1 : col, Math.max(after, 1), col);
      text = after === 0 ? originalLines(h).join(eol) + eol : eol + originalLines(h).join(eol);
    } else if (h.originalEndLineNumber === 0) {
      // lines only the migration added: remove them with their line break
      const s = h.modifiedStartLineNumber;
      const e = h.modifiedEndLineNumber;
      range =
        s > 1
          ? new monaco.Range(s - 1, m.getLineMaxColumn(s - 1), e, m.getLineMaxColumn(e))
          : new monaco.Range(1, 1, e + 1, 1);
      text = '';
    } else {
      range = new monaco.Range(
        h.modifiedStartLineNumber,
        1,
        h.modifiedEndLineNumber,
        m.getLineMaxColumn(h.modifiedEndLineNumber),
      );
      text = originalLines(h).join(eol);
    }
    // a hand edit still waiting for its save is saved first: the Undo below goes back to it
    clearTimeout(saveTimer.current);
    pendingSave.current?.();
    // what counts: the accepted changes, without this one (computed before the edit moves lines)
    const keep = new Set(accepted);
    keep.delete(hunkKey(h));
    const reviewed = handEdited.current ? null : withAccepted(keep);
    // taken now: an updater would run after the save below
    pushUndo();
    rejected.current.add(hunkKey(h));
    ours.current = true;
    // its own undo step, so undoing it touches nothing else
    m.pushStackElement();
    m.pushEditOperations([], [{ range, text }], () => null);
    m.pushStackElement();
    ours.current = false;
    setAccepted(keep);
    setPutBack((n) => n + 1);
    // nothing taken yet and other changes still to decide: the file stays pending (it is
    // "rejected" only once every change is)
    if (reviewed !== null && keep.size === 0 && hunks.length > 1) save('pending');
    else save('edited', reviewed ?? m.getValue());
  };

  /**
   * Brings the last rejection back — a change, or the whole file — as it was (accepted or not)
   * and saved as before.
   */
  const undoReject = () => {
    const m = modifiedModel();
    const before = undoable[undoable.length - 1];
    if (!m || !before) return;
    ours.current = true;
    if (before.right === undefined) m.undo();
    else replaceAll(m, before.right);
    ours.current = false;
    setUndoable(undoable.slice(0, -1));
    rejected.current = before.rejected;
    if (before.accepted) setAccepted(before.accepted);
    setPutBack(before.putBack);
    handEdited.current = before.handEdited;
    ownText.current = before.ownText;
    save(before.review, before.text);
  };

  /** Rejects every change of the file: the original on the right, undoable like one change. */
  const rejectFile = () => {
    const m = modifiedModel();
    if (!m) return;
    // a hand edit is the reviewer's own work: asked first, as Reset does (Undo is only until the
    // next accept or edit, and the question says so)
    if ((handEdited.current || ownText.current) && !window.confirm(t('code.rejectWithEdits')))
      return;
    // a hand edit still waiting for its save is saved first: the Undo below goes back to it
    clearTimeout(saveTimer.current);
    pendingSave.current?.();
    pushUndo();
    ours.current = true;
    replaceAll(m, content.original);
    ours.current = false;
    handEdited.current = false;
    ownText.current = false;
    setAccepted(new Set());
    setPutBack(0);
    rejected.current = new Set();
    save('rejected');
  };

  /**
   * The original with just the accepted changes in it: what a file reviewed change by change
   * amounts to (changes not decided yet stay out until accepted).
   */
  const withAccepted = (keys: Set<string>): string | null => {
    const model = editor.current?.getModel();
    if (!model) return null;
    const o = model.original.getLinesContent();
    const m = model.modified.getLinesContent();
    const out: string[] = [];
    let pos = 1; // the next original line to copy
    const copyTo = (last: number) => {
      for (; pos <= last; pos++) out.push(o[pos - 1]!);
    };
    for (const h of [...hunks].sort(
      (a, b) => a.originalStartLineNumber - b.originalStartLineNumber,
    )) {
      if (!keys.has(hunkKey(h))) continue;
      if (h.originalEndLineNumber === 0) copyTo(h.originalStartLineNumber);
      else copyTo(h.originalStartLineNumber - 1);
      if (h.modifiedEndLineNumber !== 0)
        out.push(...m.slice(h.modifiedStartLineNumber - 1, h.modifiedEndLineNumber));
      if (h.originalEndLineNumber !== 0) pos = h.originalEndLineNumber + 1;
    }
    copyTo(o.length);
    return out.join(model.modified.getEOL());
  };

  const accept = (h: LineChange) => {
    const next = new Set(accepted).add(hunkKey(h));
    setAccepted(next);
    // an Undo now would restore the decisions of before the reject, this accept lost with them
    setUndoable([]);
    // on to the next change still to decide, after this one (then from the top), not back to
    // the first: accepting change 3 showed change 1 again, as if it were the one accepted
    const at = hunks.indexOf(h);
    const following = [...hunks.slice(at + 1), ...hunks.slice(0, at)].find(
      (x) => !next.has(hunkKey(x)),
    );
    if (following) show(hunks.indexOf(following));
    // each accepted change counts at once: the file is saved with the accepted ones in it (after
    // a hand edit the right-hand side as it stands is the review)
    const text = handEdited.current ? (modifiedModel()?.getValue() ?? null) : withAccepted(next);
    if (text !== null) save('edited', text);
  };

  const setAll = (text: string, review: ReviewState) => {
    const m = modifiedModel();
    if (!m) return;
    // a hand edit is the reviewer's own work, and no Undo brings it back (one a Reject file put
    // aside for its Undo too: this clears the Undo list)
    const edits =
      handEdited.current || ownText.current || undoable.some((u) => u.handEdited || u.ownText);
    if (edits && !window.confirm(t('code.discardEdits'))) return;
    // a hand edit still waiting for its save is dropped with the rest
    clearTimeout(saveTimer.current);
    pendingSave.current = null;
    ours.current = true;
    m.setValue(text);
    ours.current = false;
    handEdited.current = false;
    ownText.current = false;
    setAccepted(new Set());
    setPutBack(0);
    setUndoable([]);
    rejected.current = new Set();
    save(review, review === 'edited' ? text : undefined);
  };

  // a file whose findings need a hand edit has no proposal: nothing to accept or reject until it
  // is edited (its review is the hand edit, saved as it is typed), and Reset takes it back to the
  // original (the proposal is the original)
  const proposesChanges = content.proposed !== content.original;
  // how many changes the proposal holds, for "all N rejected": diffed only while that is shown,
  // once (it was diffed again on every render)
  const allRejected = ready && proposesChanges && !hunks.length && !putBack;
  const proposedCount = useMemo(
    () => (allRejected ? lineDiff(content.original, content.proposed).length : 0),
    [allRejected, content.original, content.proposed],
  );
  const changes = hunks.length > 0;

  const index = Math.min(cursor, hunks.length - 1);
  const current = index >= 0 ? hunks[index] : undefined;
  const show = (i: number) => {
    const h = hunks[i];
    if (!h) return;
    setCursor(i);
    const line = Math.max(h.modifiedStartLineNumber, 1);
    editor.current?.getModifiedEditor().revealLineInCenter(line);
    editor.current?.getModifiedEditor().setPosition({ lineNumber: line, column: 1 });
  };

  return (
    <div className="review-editor">
      <div className="review-bar" role="toolbar" aria-label={t('code.fileActions')}>
        <span className="muted small" data-testid="hunk-count">
          {/* until the diff is on screen there is no count to give: "0 changes" read as a file
              with nothing to review */}
          {!ready
            ? t('common.loading')
            : proposesChanges && !hunks.length
              ? // "0 changes" read as a file with nothing proposed
                t('code.allRejected', {
                  count: putBack || proposedCount,
                })
              : putBack > 0
                ? t('code.hunksPutBack', { count: hunks.length, back: putBack })
                : t('code.hunks', { count: hunks.length })}
        </span>
        {!props.readOnly && undoable.length > 0 && (
          <button className="small" data-testid="hunk-undo" onClick={undoReject}>
            {t('code.undoReject')}
          </button>
        )}
        <div className="spacer" />
        {!props.readOnly && (
          <>
            <button
              data-testid="file-accept"
              className="primary"
              disabled={!ready || !changes}
              onClick={() => {
                const m = modifiedModel();
                if (!m) return;
                setAccepted(new Set(hunks.map(hunkKey)));
                setUndoable([]);
                save('edited', m.getValue());
              }}
            >
              {t('code.acceptFile')}
            </button>
            <button data-testid="file-reject" disabled={!ready || !changes} onClick={rejectFile}>
              {t('code.rejectFile')}
            </button>
            <button
              data-testid="file-reset"
              disabled={!ready || (!proposesChanges && !changes)}
              onClick={() => setAll(content.proposed, 'pending')}
            >
              {t('code.resetFile')}
            </button>
          </>
        )}
      </div>
      {loadError && <p className="error-text">{loadError}</p>}
      {ready && !proposesChanges && !props.readOnly && (
        <p className="muted small" data-testid="no-proposal">
          {t('code.noProposal')}
        </p>
      )}
      {current && (
        <div className="hunk-nav" data-testid="hunk-nav">
          <button
            className="small"
            aria-label={t('code.prevChange')}
            disabled={index <= 0}
            onClick={() => show(index - 1)}
            data-testid="hunk-prev"
          >
            ‹
          </button>
          <button className="link" onClick={() => show(index)} data-testid="hunk-label">
            {t('code.hunk', {
              n: index + 1,
              count: hunks.length,
              from: current.originalStartLineNumber || current.originalEndLineNumber + 1,
              to: current.modifiedStartLineNumber || current.modifiedEndLineNumber + 1,
            })}
          </button>
          <button
            className="small"
            aria-label={t('code.nextChange')}
            disabled={index >= hunks.length - 1}
            onClick={() => show(index + 1)}
            data-testid="hunk-next"
          >
            ›
          </button>
          {!props.readOnly && (
            <span className="hunk-actions">
              <button
                className="small"
                data-testid="hunk-accept"
                aria-pressed={accepted.has(hunkKey(current))}
                onClick={() => accept(current)}
              >
                {accepted.has(hunkKey(current)) ? t('code.accepted') : t('code.accept')}
              </button>
              <button className="small" data-testid="hunk-reject" onClick={() => reject(current)}>
                {t('code.reject')}
              </button>
            </span>
          )}
          <span className="muted small" data-testid="hunk-accepted">
            {/* with some rejected, in the nav's terms: the changes it steps through are the
                accepted and the undecided ones */}
            {putBack > 0
              ? t('code.acceptedRejected', {
                  done: hunks.filter((h) => accepted.has(hunkKey(h))).length,
                  back: putBack,
                  left: hunks.filter((h) => !accepted.has(hunkKey(h))).length,
                })
              : t('code.acceptedCount', {
                  done: hunks.filter((h) => accepted.has(hunkKey(h))).length,
                  count: hunks.length,
                })}
          </span>
        </div>
      )}
      <div
        ref={host}
        className="monaco-host"
        data-testid="diff-editor"
        data-ready={ready ? 'true' : 'false'}
      />
    </div>
  );
}
