import type { Page } from '@playwright/test';

/**
 * A screenshot for docs/screens, written only with `AMW_SCREENSHOTS=1` (the README's command that
 * refreshes them), so a test run leaves the checkout as it was.
 */
export async function docShot(page: Page, name: string): Promise<void> {
  if (process.env.AMW_SCREENSHOTS === '1')
    await page.screenshot({ path: `docs/screens/${name}.png`, fullPage: true });
}
