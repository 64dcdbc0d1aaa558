import { useTranslation } from 'react-i18next';
import { stageNs } from '../../../../shared/stages';
import { useText } from '../../i18n';
import type { StageInfo } from './types';

/**
 * A stage's name in the language shown: a built stage's from its namespace (`stage-<id>:name`),
 * one this build lacks from the knowledge data `app.info` carries.
 */
export function useStageName(): (stage: StageInfo) => string {
  const { t } = useTranslation();
  const text = useText();
  return (st) => (st.built ? t(`${stageNs(st.id)}:name`) : st.name ? text(st.name) : st.id);
}
