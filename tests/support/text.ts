import type { Text } from '../../shared/api';
import { textIn } from '../../electron/core/i18n';

/** Stored engine text as a reader of each language sees it. */
export const en = (text: Text | null | undefined): string => textIn('en')(text);
export const zh = (text: Text | null | undefined): string => textIn('zh-CN')(text);
