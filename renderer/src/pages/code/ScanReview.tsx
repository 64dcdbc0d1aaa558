import { useEffect, useMemo, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type {
  CodeFileContent,
  CodeFileEntry,
  CodeFinding,
  CodeScanRecord,
  Language,
  ReviewState,
  Severity,
} from '../../../../shared/api';
import { lineDiff } from '../../../../shared/diff/line-diff';
import { ruleTitle, titleWithId, type Translate } from '../../../../shared/i18n';
import { useAction, useCall, useTransport } from '../../api';
import { Dialog } from '../../components/Dialog';
import { ErrorText } from '../../components/ErrorText';
import { useText } from '../../i18n';
import { loadMonaco } from '../../monaco/load';
import { FindingsList } from './FindingsList';
import { markFileRequested } from './open-timing';
import { ReviewEditor } from './ReviewEditor';
import { href } from '../../routes';

const SEVERITIES: Severity[] = ['error', 'warning', 'info'];

interface Filters {
  severities: Set<Severity>;
  category: string;
  rule: string;
}

const matchesFilters = (f: CodeFinding, x: Filters) =>
  x.severities.has(f.severity) &&
  (!x.category || f.category === x.category) &&
  (!x.rule || f.ruleId === x.rule);

/** Files grouped by folder, the way a tree shows them; folders sorted, files within. */
function byFolder(files: CodeFileEntry[]): [string, CodeFileEntry[]][] {
  const groups = new Map<string, CodeFileEntry[]>();
  for (const f of files) {
    const dir = f.file.includes('/') ? f.file.slice(0, f.file.lastIndexOf('/')) : '';
    groups.set(dir, [...(groups.get(dir) ?? []), f]);
  }
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/x-diff' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** One scan: file tree with counts and filters, the diff of the chosen file, export and apply. */
export function ScanReview(props: {
  scanId: number;
  initialFile?: string | null;
  initialLine?: number | null;
  onBack: () => void;
}) {
  const { t, i18n } = useTranslation();
  const scan = useCall('code.get', { scanId: props.scanId });
  // start fetching the editor while the scan loads: the first diff then opens without the wait
  useEffect(() => void loadMonaco(i18n.language as Language).catch(() => undefined), [i18n]);
  const [file, setFile] = useState<string | null>(props.initialFile ?? null);
  // the address names the open file, so a reload or a copied link reopens it; replaced, not
  // pushed: Back still leaves the review rather than stepping through every file looked at
  useEffect(() => {
    if (!file) return;
    const at = href.scan(props.scanId, file);
    if (location.hash !== at && !location.hash.startsWith(`${at}@`))
      history.replaceState(null, '', at);
  }, [file, props.scanId]);
  const [filters, setFilters] = useState<Filters>({
    severities: new Set(SEVERITIES),
    category: '',
    rule: '',
  });
  if (scan.error) return <ErrorText error={scan.error} />;
  if (!scan.data) return <p className="muted">{t('common.loading')}</p>;
  return (
    <ScanReviewLoaded
      scan={scan.data}
      // the first file with a proposal, else the first with findings (one to edit by hand)
      file={
        file ??
        scan.data.fileList.find((f) => f.changed)?.file ??
        scan.data.fileList.find((f) => scan.data!.findings.some((x) => x.file === f.file))?.file ??
        null
      }
      setFile={setFile}
      filters={filters}
      setFilters={setFilters}
      lang={i18n.language as Language}
      line={file === props.initialFile ? (props.initialLine ?? null) : null}
      onBack={props.onBack}
    />
  );
}

function ScanReviewLoaded(props: {
  scan: CodeScanRecord;
  file: string | null;
  setFile: (f: string) => void;
  filters: Filters;
  setFilters: (f: Filters) => void;
  lang: Language;
  line: number | null;
  onBack: () => void;
}) {
  const { t, i18n } = useTranslation();
  const text = useText();
  const { scan, filters } = props;
  const client = useQueryClient();
  const transport = useTransport();
  const apply = useAction('code.apply', ['code.get']);
  const [confirm, setConfirm] = useState(false);
  const [patchError, setPatchError] = useState<unknown>(null);
  const [exported, setExported] = useState<number | null>(null);
  const categories = useMemo(
    () => [...new Set(scan.findings.map((f) => f.category))].sort(),
    [scan.findings],
  );
  // named as the findings' cards name them (the id after, as reports and SARIF give it), in
  // alphabetical order of the names shown
  const rules = useMemo(
    () =>
      [...new Set(scan.findings.map((f) => f.ruleId))]
        .map((id) => ({
          id,
          title: titleWithId(t as Translate, ruleTitle(t as Translate, id), id),
        }))
        .sort((a, b) => a.title.localeCompare(b.title, i18n.language)),
    [scan.findings, t, i18n.language],
  );
  const visible = scan.findings.filter((f) => matchesFilters(f, filters));
  // counted once, not per file of the tree (a scan of thousands of findings and files)
  const shownIn = new Map<string, number>();
  for (const f of visible) shownIn.set(f.file, (shownIn.get(f.file) ?? 0) + 1);
  /** The files with a finding the filters let through, in the tree's order. */
  const filesMatching = (x: Filters) => {
    const hit = new Set(scan.findings.filter((f) => matchesFilters(f, x)).map((f) => f.file));
    return scan.fileList.filter((f) => hit.has(f.file));
  };
  // a file the new filters hide does not stay open beside a tree that no longer lists it
  const filterBy = (next: Filters) => {
    props.setFilters(next);
    const matching = filesMatching(next);
    const [shown] = byFolder(matching).flatMap(([, files]) => files);
    if (shown && !matching.some((f) => f.file === props.file)) props.setFile(shown.file);
  };
  const filesShown = scan.fileList.filter((f) => shownIn.has(f.file));
  // a hand edit counts whether or not the file had a proposal (a file whose findings need one)
  const decided = scan.fileList.filter(
    (f) => ((f.changed && f.review === 'accepted') || f.review === 'edited') && !f.appliedAt,
  );
  const changed = scan.fileList.filter((f) => f.changed);

  const exportPatch = async () => {
    setPatchError(null);
    setExported(null);
    try {
      const p = await transport.call('code.patch', { scanId: scan.id });
      // a patch of nothing is said, not downloaded as an empty file
      if (!p.files.length) return setExported(0);
      download(`amw-scan-${scan.id}.patch`, p.patch);
      setExported(p.files.length);
    } catch (err) {
      setPatchError(err);
    }
  };

  return (
    <section className="page code-review" data-testid="scan-review">
      <header className="page-head">
        <button className="link" onClick={props.onBack} data-testid="back-to-scans">
          ← {t('code.allScans')}
        </button>
        <h1 title={scan.root}>{scan.root.split('/').filter(Boolean).pop() ?? scan.root}</h1>
        <span
          className={`badge ${scan.counts.error ? 'fail' : scan.counts.warning ? 'warn' : 'ok'}`}
        >
          {t('code.effort', { level: t(`code.level.${scan.effort.level}`) })}
        </span>
        <div className="spacer" />
        <button onClick={() => void exportPatch()} data-testid="export-patch">
          {t('code.exportPatch')}
        </button>
        <button
          className="primary"
          disabled={!decided.length}
          onClick={() => setConfirm(true)}
          data-testid="apply-open"
        >
          {t('code.apply', { count: decided.length })}
        </button>
      </header>
      <p className="muted small" data-testid="scan-summary">
        {t('code.summary', {
          files: t('code.n.pyFiles', { count: scan.files }),
          lines: t('code.n.lines', { count: scan.lines }),
          errors: t('code.n.errors', { count: scan.counts.error }),
          warnings: t('code.n.warnings', { count: scan.counts.warning }),
          infos: t('code.n.notes', { count: scan.counts.info }),
          changed: t('code.n.changed', { count: changed.length }),
        })}{' '}
        ·{' '}
        {t('code.dimensions', {
          device: scan.effort.dimensions.device,
          thirdParty: scan.effort.dimensions.thirdParty,
          amp: scan.effort.dimensions.mixedPrecision,
          multiCard: scan.effort.dimensions.multiCard,
        })}
      </p>
      {patchError !== null && <ErrorText error={patchError} />}
      {exported === 0 && (
        <p className="notice warn" data-testid="export-nothing">
          {t('code.exportNothing')}
        </p>
      )}
      {exported !== null && exported > 0 && (
        <p className="notice ok" data-testid="export-done">
          {t('code.exported', { count: exported })}
        </p>
      )}
      {apply.error && <ErrorText error={apply.error} />}
      {apply.data && (
        <p className="notice ok" data-testid="apply-result">
          {t('code.applied', { count: apply.data.applied.length, backup: apply.data.backupDir })}
        </p>
      )}
      {scan.warnings.length > 0 && (
        <details className="notice warn" data-testid="scan-warnings">
          <summary>{t('code.warnings', { count: scan.warnings.length })}</summary>
          <ul>
            {scan.warnings.map((w, n) => (
              <li key={n}>{text(w)}</li>
            ))}
          </ul>
        </details>
      )}
      {scan.skipped.length > 0 && (
        <details className="notice warn" data-testid="scan-skipped">
          <summary>{t('code.skipped', { count: scan.skipped.length })}</summary>
          <ul>
            {scan.skipped.map((f) => (
              <li key={f}>
                <code>{f}</code>
              </li>
            ))}
          </ul>
        </details>
      )}
      <div className="review-layout">
        <aside className="file-tree" aria-label={t('code.files')}>
          <fieldset className="filters">
            <legend>{t('code.filters')}</legend>
            <div className="chips">
              {SEVERITIES.map((s) => (
                <label key={s} className={`chip ${s}`}>
                  <input
                    type="checkbox"
                    data-testid={`filter-${s}`}
                    checked={filters.severities.has(s)}
                    onChange={(e) => {
                      const next = new Set(filters.severities);
                      if (e.target.checked) next.add(s);
                      else next.delete(s);
                      filterBy({ ...filters, severities: next });
                    }}
                  />
                  {t(`code.severity.${s}`)}
                  {t('common.paren', { text: scan.counts[s] })}
                </label>
              ))}
            </div>
            <select
              aria-label={t('code.category')}
              data-testid="filter-category"
              value={filters.category}
              onChange={(e) => filterBy({ ...filters, category: e.target.value })}
            >
              <option value="">{t('code.allCategories')}</option>
              {categories.map((c) => (
                <option key={c} value={c}>
                  {t(`code.categories.${c}`, { defaultValue: c })}
                </option>
              ))}
            </select>
            <select
              aria-label={t('code.rule')}
              data-testid="filter-rule"
              value={filters.rule}
              onChange={(e) => filterBy({ ...filters, rule: e.target.value })}
            >
              <option value="">{t('code.allRules')}</option>
              {rules.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.title}
                </option>
              ))}
            </select>
          </fieldset>
          {filesShown.length === 0 && <p className="muted small">{t('code.noMatches')}</p>}
          {byFolder(filesShown).map(([dir, files]) => (
            <div key={dir} className="tree-group">
              {dir && <div className="tree-dir">{dir}/</div>}
              <ul>
                {files.map((f) => {
                  const n = shownIn.get(f.file) ?? 0;
                  return (
                    <li key={f.file}>
                      <button
                        className="tree-file"
                        aria-current={props.file === f.file ? 'true' : undefined}
                        data-testid="tree-file"
                        data-file={f.file}
                        onClick={() => {
                          if (f.file !== props.file) markFileRequested();
                          // ask the engine for the file before rendering anything: the
                          // request then runs while the page lays out the review
                          void client.prefetchQuery({
                            queryKey: ['code.file', { scanId: scan.id, file: f.file }],
                            queryFn: () =>
                              transport.call('code.file', { scanId: scan.id, file: f.file }),
                          });
                          props.setFile(f.file);
                        }}
                      >
                        <span className="name">{f.file.split('/').pop()}</span>
                        <span className={`count ${f.errors ? 'fail' : f.warnings ? 'warn' : ''}`}>
                          {n}
                        </span>
                        {(f.changed || f.review === 'edited') && <ReviewMark entry={f} />}
                      </button>
                    </li>
                  );
                })}
              </ul>
            </div>
          ))}
        </aside>
        <div className="review-main">
          {props.file ? (
            <FileReview
              key={`${scan.id}:${props.file}`}
              scanId={scan.id}
              file={props.file}
              entry={scan.fileList.find((f) => f.file === props.file) ?? null}
              findings={visible.filter((f) => f.file === props.file)}
              markers={scan.findings.filter((f) => f.file === props.file)}
              lang={props.lang}
              line={props.line}
              // what shows the review elsewhere too: the scans tables (counts), the session's timeline
              onSaved={() => {
                for (const m of ['code.get', 'code.scans', 'sessions.timeline'])
                  void client.invalidateQueries({ queryKey: [m] });
              }}
            />
          ) : (
            <p className="muted">{t('code.pickFile')}</p>
          )}
        </div>
      </div>
      {confirm && (
        <Dialog
          title={t('code.applyTitle')}
          onClose={() => setConfirm(false)}
          testId="apply-dialog"
        >
          <p>{t('code.applyExplain', { count: decided.length, root: scan.root })}</p>
          <ul className="small">
            {decided.map((f) => (
              <li key={f.file}>
                <code>{f.file}</code>
              </li>
            ))}
          </ul>
          <footer>
            <button onClick={() => setConfirm(false)}>{t('common.cancel')}</button>
            <button
              className="primary"
              data-testid="apply-confirm"
              onClick={() => {
                setConfirm(false);
                apply.mutate({ scanId: scan.id });
              }}
            >
              {t('code.applyNow')}
            </button>
          </footer>
        </Dialog>
      )}
    </section>
  );
}

/** How many of a file's proposed changes its review took, when not all of them. */
const takenInPart = (f: CodeFileEntry) =>
  f.review === 'edited' && f.changes && f.changes.accepted < f.changes.total ? f.changes : null;

/** A file's review in the tree: applied, accepted, partly accepted (n/m), rejected or pending. */
function ReviewMark({ entry: f }: { entry: CodeFileEntry }) {
  const { t } = useTranslation();
  const taken = takenInPart(f);
  const partial = f.appliedAt ? null : taken;
  const state = f.appliedAt ? 'applied' : partial ? 'partial' : f.review;
  return (
    <span
      className={`review-state ${state}`}
      data-testid="review-state"
      data-state={state}
      title={
        partial
          ? t('code.review.partial', { accepted: partial.accepted, total: partial.total })
          : f.appliedAt && taken
            ? t('code.review.appliedPartial', { accepted: taken.accepted, total: taken.total })
            : t(`code.review.${state}`)
      }
    >
      {partial
        ? `${partial.accepted}/${partial.total}`
        : t(`code.reviewShort.${f.appliedAt ? 'applied' : f.review}`)}
    </span>
  );
}

function FileReview(props: {
  scanId: number;
  file: string;
  entry: CodeFileEntry | null;
  /** The file's findings the filters let through (the list below the diff). */
  findings: CodeFinding[];
  /** All of the file's findings (the markers in the diff). */
  markers: CodeFinding[];
  lang: Language;
  line: number | null;
  onSaved: () => void;
}) {
  const { t } = useTranslation();
  // a finding clicked in the list below shows its line in the editor
  const [line, setLine] = useState(props.line);
  return (
    <div className="file-review" data-testid="file-review">
      <h2 className="file-title">
        <code>{props.file}</code>
        {props.entry && !props.entry.parses && (
          <span className="badge warn">{t('code.notProposed')}</span>
        )}
      </h2>
      {props.entry?.hasText ? (
        <FileDiff {...props} line={line} />
      ) : (
        <p className="muted">{t('code.noText')}</p>
      )}
      <FindingsList findings={props.findings} onPick={setLine} />
    </div>
  );
}

function FileDiff(props: {
  scanId: number;
  file: string;
  entry: CodeFileEntry | null;
  markers: CodeFinding[];
  lang: Language;
  line: number | null;
  onSaved: () => void;
}) {
  const { t } = useTranslation();
  const transport = useTransport();
  const client = useQueryClient();
  const key = { scanId: props.scanId, file: props.file };
  const taken = props.entry ? takenInPart(props.entry) : null;
  const content = useCall('code.file', key);
  const [saveError, setSaveError] = useState<unknown>(null);
  const review = (state: ReviewState, text?: string, rejected: string[] = []) => {
    setSaveError(null);
    transport.call('code.review', { ...key, review: state, text, rejected }).then((entry) => {
      // the file as the engine now has it, for the next time it opens (this view keeps its own)
      client.setQueryData(['code.file', key], (old: CodeFileContent | undefined) =>
        old ? withReview(old, entry.review, text, rejected) : old,
      );
      props.onSaved();
    }, setSaveError);
  };
  return (
    <>
      {saveError !== null && <ErrorText error={saveError} />}
      {content.error && <ErrorText error={content.error} />}
      {/* written to the folder: read-only now, and what of the proposal is not in it */}
      {props.entry?.appliedAt && (
        <p className="notice" data-testid="applied-note">
          {taken
            ? t('code.review.appliedPartial', { accepted: taken.accepted, total: taken.total })
            : t('code.review.applied')}
        </p>
      )}
      {content.data && (
        <ReviewEditor
          content={content.data}
          findings={props.markers}
          lang={props.lang}
          revealLine={props.line}
          onReview={review}
          readOnly={!!props.entry?.appliedAt}
        />
      )}
    </>
  );
}

/** A file's content after a review was saved (`review` as the engine settled it). */
function withReview(
  old: CodeFileContent,
  review: ReviewState,
  text: string | undefined,
  rejected: string[],
): CodeFileContent {
  const reviewed = review === 'edited' && text !== undefined ? text : null;
  const shown = reviewed ?? (review === 'rejected' ? old.original : old.proposed);
  // as the engine keeps them: only a decision change by change has changes rejected apart
  const apart = review === 'pending' || review === 'edited' ? rejected : [];
  return { ...old, review, reviewed, rejected: apart, diff: lineDiff(old.original, shown) };
}
