import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { resourcesDir } from '../../paths';
import { parseKnowledgeFile } from '../../knowledge/parse-file';

const Src = { $source: z.string().min(1) };

const FleetRulesFile = z
  .object({
    $comment: z.string(),
    version: z.literal(1),
    netHealth: z.object({ ...Src, pass: z.array(z.string()), warn: z.array(z.string()) }),
    connectTimeout: z.object({
      ...Src,
      default: z.number().int().positive(),
      min: z.number().int(),
      max: z.number().int(),
      byRanks: z
        .array(z.object({ ranksAbove: z.number().int().min(0), seconds: z.number().int() }))
        .min(1),
    }),
    execTimeout: z.object({ ...Src, default: z.number(), min: z.number(), max: z.number() }),
    memlockMinKiB: z.object({ ...Src, value: z.number().int().positive() }),
    ports: z.object({
      ...Src,
      base: z.number().int().min(1).max(65535),
      blockUpTo81: z.number().int().positive(),
      blockFrom82: z.number().int().positive(),
      npu: z.number().int().min(1).max(65535),
    }),
    versions: z.object({
      ...Src,
      fail: z.array(z.enum(['cann', 'driver', 'firmware'])),
      warn: z.array(z.enum(['cann', 'driver', 'firmware'])),
    }),
    env: z.object({ ...Src, mustMatch: z.array(z.string()), perHost: z.array(z.string()) }),
    subnets: z.object({
      ...Src,
      pairedChips: z.array(z.string()).min(1),
      pairOffset: z.number().int().positive(),
    }),
    pingMatrix: z.object({
      ...Src,
      allPairsUpToDevices: z.number().int().positive(),
      samples: z.number().int().min(0),
    }),
  })
  .strict();

export type FleetRules = z.infer<typeof FleetRulesFile>;

/** Validates the rules' document; a broken file fails naming itself and the field. */
export function parseFleetRules(text: string, file: string): FleetRules {
  const rules = parseKnowledgeFile(text, file, FleetRulesFile);
  const steps = rules.connectTimeout.byRanks;
  if (steps.some((s, i) => i > 0 && s.ranksAbove <= steps[i - 1]!.ranksAbove))
    throw new Error(`${file} is not valid: connectTimeout.byRanks must ascend by ranksAbove`);
  return rules;
}

let cached: FleetRules | undefined;

/** resources/knowledge/distributed/fleet-rules.json, validated once. */
export function fleetRules(): FleetRules {
  if (cached) return cached;
  const file = join(resourcesDir(), 'knowledge', 'distributed', 'fleet-rules.json');
  return (cached = parseFleetRules(readFileSync(file, 'utf8'), file));
}
