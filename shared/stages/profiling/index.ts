import * as z from 'zod';
import { FORMATS } from '../../api/validation';
import { defineSharedStage, stageInput } from '../define';
import { profilingApi } from './api';
import { en } from './messages/en';
import { zhCN } from './messages/zh-CN';
import { profilingReport } from './report';

/**
 * Profiling: the entry run for N steps under torch_npu.profiler (torch.profiler on a host without
 * an NPU, said so) on one host or several at once, every node's output gathered over SFTP and
 * read as one profile with the same parsers as an import.
 */
export const profilingStage = defineSharedStage({
  id: 'profiling',
  runsOn: 'hosts',
  input: stageInput('profiling', 'hosts', {
    /** `FILE:FUNCTION` on the host; FUNCTION() returns (model, batches). */
    entry: z
      .string()
      .max(4096)
      .regex(/^[^\0\n]+:[A-Za-z_][A-Za-z0-9_]*$/, FORMATS.formatEntry)
      .optional(),
    /** Profile a whole script run instead (its own loop; no step count). */
    script: z
      .string()
      .max(4096)
      .regex(/^[^\0\n]+$/)
      .optional(),
    /** Steps profiled after one warm-up step. */
    steps: z.number().int().min(1).max(100).optional(),
    /** torch_npu.profiler level. */
    level: z.enum(['Level0', 'Level1', 'Level2']).optional(),
    backward: z.boolean().optional(),
    /** What torch_npu.profiler records (torch.profiler on a stand-in host always records the CPU). */
    activities: z
      .array(z.enum(['cpu', 'npu']))
      .min(1)
      .max(2)
      .optional(),
    /**
     * Ranks launched on each host with torchrun (`--nproc_per_node`), each writing its own
     * output; `'npus'`: one per NPU the host has. Absent: one process per host, no torchrun.
     */
    ranksPerHost: z.union([z.number().int().min(1).max(64), z.literal('npus')]).optional(),
    /** A stored profiling run of the GPU baseline: the step-time check compares with it. */
    baseline: z.number().int().positive().optional(),
    /** Step-time ratio (NPU / GPU) that still passes. */
    targetRatio: z.number().positive().max(100).optional(),
  }),
  messages: { en, 'zh-CN': zhCN },
  report: profilingReport,
  api: profilingApi,
});
