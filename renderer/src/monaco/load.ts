// Monaco from the installed package, never a CDN: the editor core, the contributions a diff review
// uses, the Python grammar, and its worker built by Vite as a same-origin file (CSP worker-src 'self').
import type * as MonacoApi from 'monaco-editor/editor/editor.api';
import type { Language } from '../../../shared/api';

export type Monaco = typeof MonacoApi;

let loading: Promise<Monaco> | undefined;

/**
 * Loads Monaco once, on first use (it is large; the rest of the app does not wait for it). Its
 * own strings follow the app language of that moment: Monaco reads them when its modules load.
 */
export function loadMonaco(lang: Language): Promise<Monaco> {
  loading ??= (async () => {
    if (lang === 'zh-CN') await import('monaco-editor/nls/lang/zh-cn');
    const { default: EditorWorker } = await import('monaco-editor/editor/editor.worker?worker');
    (self as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = {
      getWorker: () => new EditorWorker(),
    };
    const monaco = await import('monaco-editor/editor/editor.api');
    await import('./contributions');
    return monaco;
  })();
  return loading;
}
