import * as z from 'zod';
import { codeApi, FIX_MODES } from './api';
import { defineSharedStage, stageInput } from '../define';
import { en } from './messages/en';
import { codeReport } from './report';
import { zhCN } from './messages/zh-CN';

/** Code migration: the project's folder scanned on this machine, one check per rule that fired. */
export const codeStage = defineSharedStage({
  id: 'code',
  runsOn: 'local',
  input: stageInput('code', 'local', {
    /** The folder to scan; relative paths and no path resolve against the project's location. */
    path: z.string().min(1).max(4096).optional(),
    mode: z.enum(FIX_MODES).default('rewrite'),
    exclude: z.array(z.string().min(1).max(400)).max(100).optional(),
  }),
  messages: { en, 'zh-CN': zhCN },
  report: codeReport,
  api: codeApi,
  checksAreFindings: true,
});
