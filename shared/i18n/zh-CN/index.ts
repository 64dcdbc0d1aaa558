import type { Messages } from '../en';
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

/** 简体中文。键与 en 完全一致；每个命名空间一个文件。 */
export const zhCN: Messages = {
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
};
