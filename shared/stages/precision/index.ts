import * as z from 'zod';
import { FORMATS } from '../../api/validation';
import { HostName } from '../../api/hosts';
import { defineSharedStage, stageInput } from '../define';
import { precisionApi } from './api';
import { en } from './messages/en';
import { precisionReport } from './report';
import { zhCN } from './messages/zh-CN';

/**
 * Precision: the same model, weights and inputs on a baseline host and on the target (NPU)
 * host, compared module by module in execution order; the first module that diverges.
 */
export const precisionStage = defineSharedStage({
  id: 'precision',
  runsOn: 'host',
  input: stageInput('precision', 'host', {
    /** The reference side: a GPU host, a CPU host, or the NPU host itself in fp32. */
    baseline: HostName,
    /** `FILE:FUNCTION` on both hosts; FUNCTION() returns (model, batches). */
    entry: z
      .string()
      .max(4096)
      .regex(/^[^\0\n]+:[A-Za-z_][A-Za-z0-9_]*$/, FORMATS.formatEntry)
      .optional(),
    /** Instead of an entry: the user's script (on both hosts) run as-is, its modules hooked as called. */
    script: z
      .string()
      .max(4096)
      .regex(/^[^\0\n]+$/)
      .optional(),
    /** Script mode: how many calls of the model are recorded before the script is stopped. */
    steps: z.number().int().min(1).max(100).optional(),
    /** Aten ops to record too (`gelu`, `aten::softmax`), beside the modules in execution order. */
    ops: z
      .array(
        z
          .string()
          .regex(/^(aten::)?[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?$/, FORMATS.formatOpName),
      )
      .max(64)
      .optional(),
    /** Tensor mode: the modules (`named_modules()` paths, `*` wildcards) whose tensors are kept. */
    modules: z
      .array(
        z
          .string()
          .min(1)
          .max(256)
          .regex(/^[^\0\n]+$/),
      )
      .max(64)
      .optional(),
    /** The target's policy (autocast on the target); the baseline runs fp32. */
    dtype: z.enum(['fp32', 'bf16', 'fp16']).default('fp32'),
    mode: z.enum(['statistics', 'tensor']).default('statistics'),
    backward: z.boolean().optional(),
  }),
  messages: { en, 'zh-CN': zhCN },
  report: precisionReport,
  api: precisionApi,
});
