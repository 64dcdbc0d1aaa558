import * as z from 'zod';
import { FORMATS } from '../../api/validation';
import { opsApi, TorchNpuVersion } from './api';
import { defineSharedStage, stageInput } from '../define';
import { en } from './messages/en';
import { opsReport } from './report';
import { zhCN } from './messages/zh-CN';

/** Operator coverage: a model's aten ops captured on the host, classified for a torch_npu. */
export const opsStage = defineSharedStage({
  id: 'ops',
  runsOn: 'host',
  input: stageInput('ops', 'host', {
    /** `FILE:FUNCTION` on the host; FUNCTION() returns (model, batches). */
    entry: z
      .string()
      .max(4096)
      .regex(/^[^\0\n]+:[A-Za-z_][A-Za-z0-9_]*$/, FORMATS.formatEntry)
      .optional(),
    /** Trace a whole script run instead of an entry function. */
    script: z
      .string()
      .max(4096)
      .regex(/^[^\0\n]+$/)
      .optional(),
    backward: z.boolean().optional(),
    /** Classify for this torch_npu instead of the host's. */
    torchNpu: TorchNpuVersion.optional(),
  }),
  messages: { en, 'zh-CN': zhCN },
  report: opsReport,
  api: opsApi,
});
