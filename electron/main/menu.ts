import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Menu, type MenuItemConstructorOptions } from 'electron';
import type { Translate } from '../../shared/i18n';
import { resourcesDir } from '../core/paths';
import { openExternalSafe } from './security';

interface MenuItemDef {
  role?: MenuItemConstructorOptions['role'];
  type?: 'separator';
  label?: string;
  url?: string;
}

/** Builds the application menu from resources/menu.json in the user's language. */
export function installMenu(t: Translate): void {
  const def = JSON.parse(readFileSync(join(resourcesDir(), 'menu.json'), 'utf8')) as {
    menu: { label: string; items: MenuItemDef[] }[];
  };
  const template: MenuItemConstructorOptions[] = def.menu.map((top) => ({
    label: t(top.label),
    submenu: top.items.map((item): MenuItemConstructorOptions => {
      if (item.type === 'separator') return { type: 'separator' };
      if (item.url) {
        const url = item.url;
        return { label: t(item.label ?? ''), click: () => openExternalSafe(url) };
      }
      return { role: item.role };
    }),
  }));
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
