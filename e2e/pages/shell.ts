import { expect, type Page } from '@playwright/test';

/** Locators and steps for the app shell, shared by the specs. */
export class Shell {
  constructor(readonly page: Page) {}

  async ready(): Promise<void> {
    await expect(this.page.locator('#root[data-app-state="ready"]')).toBeAttached();
  }

  appName() {
    return this.page.getByTestId('app-name');
  }

  nav(page: 'hosts' | 'sessions' | 'code' | 'reports' | 'settings') {
    return this.page.getByTestId(`nav-${page}`);
  }

  async language(lang: 'zh-CN' | 'en'): Promise<void> {
    await this.page.getByTestId(`lang-${lang}`).click();
    await expect(this.page.getByTestId(`lang-${lang}`)).toHaveAttribute('aria-pressed', 'true');
  }

  jobsDrawer() {
    return this.page.getByTestId('jobs-drawer');
  }
}
