import type { Page } from '@playwright/test';

/**
 * A screenshot for docs/screens (`AMW_SCREENSHOTS=1`, as scripts/screenshots.ts runs the specs);
 * without it nothing is written, so a test run leaves the checkout as it was.
 */
export async function docShot(page: Page, name: string): Promise<void> {
  if (process.env.AMW_SCREENSHOTS === '1')
    await page.screenshot({ path: `docs/screens/${name}.png`, fullPage: true });
}
