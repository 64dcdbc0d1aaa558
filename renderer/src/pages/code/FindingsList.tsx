import { useState, type UIEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { CodeFinding } from '../../../../shared/api';
import { ruleTitle, titleWithId, type Translate } from '../../../../shared/i18n';
import { useText } from '../../i18n';
import { findingText } from './finding-text';
import { InlineCode, plainText } from '../../components/InlineCode';

/** Row height in px (one line per finding; the full text is in the row's tooltip). */
const ROW = 26;
/** Rows drawn above and below the visible ones, so a quick scroll shows no gap. */
const SPARE = 8;
const HEIGHT = 240;

/**
 * A file's findings under its diff, windowed: only the rows in view exist in the page, so a file
 * with five hundred findings opens as fast as one with five. A click shows the line in the diff.
 */
export function FindingsList(props: { findings: CodeFinding[]; onPick: (line: number) => void }) {
  const { t } = useTranslation();
  const show = useText();
  const [top, setTop] = useState(0);
  const { findings } = props;
  const first = Math.max(0, Math.floor(top / ROW) - SPARE);
  const last = Math.min(findings.length, Math.ceil((top + HEIGHT) / ROW) + SPARE);
  // one width for every row's line:col, so the rules and texts after it line up
  const locWidth = findings.reduce((w, f) => Math.max(w, `${f.line}:${f.column}`.length), 0);
  return (
    <div
      className="findings"
      data-testid="findings"
      role="list"
      aria-label={t('code.fileFindings')}
      style={{ maxHeight: HEIGHT }}
      onScroll={(e: UIEvent<HTMLDivElement>) => setTop(e.currentTarget.scrollTop)}
    >
      <div style={{ height: findings.length * ROW, position: 'relative' }}>
        {findings.slice(first, last).map((f, i) => {
          const text = findingText(f, show);
          // the rule by its title, as the rule filter and the cards name it; its id in the tooltip
          const rule = ruleTitle(t as Translate, f.ruleId);
          return (
            <button
              key={`${f.ruleId}@${f.line}:${f.column}`}
              role="listitem"
              className={`finding-row ${f.severity}`}
              style={{ top: (first + i) * ROW, height: ROW }}
              title={`${t('code.showLine', { line: f.line })}\n${titleWithId(t as Translate, rule, f.ruleId)}${t('common.colon')}${plainText(text)}`}
              onClick={() => props.onPick(f.line)}
            >
              <span className={`sev ${f.severity}`}>{t(`code.severity.${f.severity}`)}</span>
              <span className="loc" style={{ width: `${locWidth}ch` }}>
                {f.line}:{f.column}
              </span>
              <span className="rule" data-rule={f.ruleId}>
                {rule}
              </span>
              <span className="text">
                <InlineCode text={text} />
              </span>
            </button>
          );
        })}
      </div>
    </div>
  );
}
