import * as z from 'zod';
import { HostName } from '../../api/hosts';
import { defineSharedStage, stageInput } from '../define';
import { distributedApi } from './api';
import { en } from './messages/en';
import { zhCN } from './messages/zh-CN';
import { distributedReport } from './report';

/**
 * Distributed (HCCL): every host of the fleet probed in parallel (links, IPs, TLS, versions,
 * HCCL_* settings, firewall, NICs), the rank table checked against what was found (or generated),
 * then a real collective across the hosts.
 */
export const distributedStage = defineSharedStage({
  id: 'distributed',
  runsOn: 'hosts',
  input: stageInput('distributed', 'hosts', {
    // either hosts or a tag: prepare() turns the tag into hosts before anything is stored
    hosts: z.array(HostName).min(1).max(1024).optional(),
    tag: z.string().min(1).max(64).optional(),
    /** The rank table's text (hccl.json), read by the caller; absent: one is generated. */
    rankTable: z.string().max(8_000_000).optional(),
    /** Where that text came from, for messages. */
    rankTableFile: z.string().max(4096).optional(),
    /** Run the collective after the checks (default on). */
    collective: z.boolean().optional(),
    /** Hosts probed at once. */
    concurrency: z.number().int().min(1).max(256).optional(),
    /** A host that has not answered by then is reported as not answering (seconds). */
    hostTimeoutS: z.number().int().min(5).max(3600).optional(),
    /** The collective is stopped on every host after this (seconds). */
    collectiveDeadlineS: z.number().int().min(10).max(7200).optional(),
    launcher: z.enum(['auto', 'torchrun', 'srun', 'msrun', 'mpirun']).optional(),
    masterPort: z.number().int().min(1024).max(65535).optional(),
  }),
  messages: { en, 'zh-CN': zhCN },
  report: distributedReport,
  api: distributedApi,
});
