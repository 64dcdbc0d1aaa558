/**
 * English strings. zh-CN.ts must have exactly the same keys (the type and a unit test say so).
 * Interpolation uses i18next's {{name}} syntax in the UI and the CLI alike.
 */
import { app } from './app';
import { menu } from './menu';
import { nav } from './nav';
import { common } from './common';
import { pages } from './pages';
import { hosts } from './hosts';
import { sessions } from './sessions';
import { code } from './code';
import { report } from './report';
import { reports } from './reports';
import { jobs } from './jobs';
import { errors } from './errors';
import { validation } from './validation';
import { cli } from './cli';
import { doctor } from './doctor';
import { local } from './local';

// One file per namespace (top-level key); a new capability adds its own file and one line here.
export const en = {
  app,
  menu,
  nav,
  common,
  pages,
  hosts,
  sessions,
  code,
  report,
  reports,
  jobs,
  errors,
  validation,
  cli,
  doctor,
  local,
} as const;

/** Same keys, any string values: the shape every language must fill. */
export type Widen<T> = { -readonly [K in keyof T]: T[K] extends string ? string : Widen<T[K]> };
export type Messages = Widen<typeof en>;
