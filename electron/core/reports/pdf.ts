import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import { CHROMIUM_ARGS, chromiumPath } from './chromium';

/** Turns the report's HTML into a PDF; the desktop app passes Electron's printToPDF instead. */
export type PrintPdf = (html: string) => Promise<Buffer>;

/**
 * The CLI and serve mode print through the installed Chromium (playwright-core drives it), with
 * every network request refused: the report is self-contained, so nothing should be asked for.
 */
export const printWithChromium: PrintPdf = async (html) => {
  const executablePath = chromiumPath();
  if (!executablePath) throw new AmwError('NOT_FOUND', msg('errors.text.pdfNeedsChromium'));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.route('**/*', (route) => void route.abort());
    await page.setContent(html, { waitUntil: 'load' });
    return await page.pdf({
      format: 'A4',
      printBackground: true,
      margin: { top: '14mm', bottom: '14mm', left: '12mm', right: '12mm' },
    });
  } finally {
    await browser.close();
  }
};
