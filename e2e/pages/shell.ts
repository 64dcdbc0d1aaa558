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

  /** A new session without hosts or a project, opened. */
  async newSession(title: string): Promise<void> {
    await this.nav('sessions').click();
    await this.page.getByTestId('open-new-session').click();
    await this.page.getByTestId('session-title').fill(title);
    await this.page.getByTestId('session-create').click();
    await expect(this.page.getByTestId('session-title')).toHaveText(title);
  }

  jobsDrawer() {
    return this.page.getByTestId('jobs-drawer');
  }
}
