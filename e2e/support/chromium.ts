// The engine finds Chromium the same way for PDF export; the tests share that one definition.
export { CHROMIUM_ARGS, chromiumPath } from '../../electron/core/reports/chromium';
