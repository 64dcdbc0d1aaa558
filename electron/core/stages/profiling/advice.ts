import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import type { Advice, ProfileResult, Severity } from '../../../../shared/stages/profiling/api';
import { resourcesDir } from '../../paths';
import { m } from './csv-stream';

const Rule = z.discriminatedUnion('kind', [
  z.object({ id: z.string(), kind: z.literal('free'), threshold: z.number() }),
  z.object({ id: z.string(), kind: z.literal('uncovered-communication'), threshold: z.number() }),
  z.object({ id: z.string(), kind: z.literal('aicpu'), minTaskUs: z.number() }),
  z.object({ id: z.string(), kind: z.literal('dynamic-shape') }),
  z.object({ id: z.string(), kind: z.literal('op-dispatch'), minCount: z.number().int() }),
  z.object({ id: z.string(), kind: z.literal('dataloader') }),
  z.object({ id: z.string(), kind: z.literal('slow-rank'), threshold: z.number() }),
  z.object({
    id: z.string(),
    kind: z.literal('slow-link'),
    threshold: z.number(),
    severityByRatio: z.object({ high: z.number(), medium: z.number() }),
  }),
  z.object({
    id: z.string(),
    kind: z.literal('env-vars'),
    vars: z.array(
      z.object({
        name: z.string(),
        when: z.enum(['set', 'set-not', 'unset-or-below', 'unset-or-zero', 'lacks', 'equals']),
        value: z.string().optional(),
      }),
    ),
  }),
  z.object({
    id: z.string(),
    kind: z.literal('fusible'),
    present: z.array(z.string()).min(1),
    needs: z.number().int().min(1),
    absent: z.array(z.string()),
    api: z.string(),
  }),
]);

const AdviceFile = z.object({
  thresholds: z.object({ topN: z.number().int().min(1), dataloaderUs: z.number() }),
  severity: z.object({ high: z.number(), medium: z.number() }),
  /** The stage's checks (prof.*): a share of step time above which the check warns. */
  checks: z.object({
    aicpuShare: z.number(),
    freeShare: z.number(),
    communicationShare: z.number(),
    stepTimeRatio: z.number(),
  }),
  rules: z.array(Rule).min(1),
});
export type AdviceRules = z.infer<typeof AdviceFile>;

let cached: AdviceRules | undefined;

/** resources/knowledge/profiling-advice.json, validated once (a broken file fails naming itself). */
export function profilingAdvice(): AdviceRules {
  if (cached) return cached;
  const file = join(resourcesDir(), 'knowledge', 'profiling-advice.json');
  const parsed = AdviceFile.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `${file} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return (cached = parsed.data);
}

const pct = (x: number) => Math.round(x * 10000) / 100;

/** The time the shares are of: every step of every rank, else all kernel time, else none. */
export function stepBasis(r: ProfileResult): { us: number; basis: 'steps' | 'kernels' } | null {
  const steps = r.stepTimes.reduce((a, s) => a + s.us, 0);
  if (steps > 0) return { us: steps, basis: 'steps' };
  if (r.kernels && r.kernels.totalUs > 0) return { us: r.kernels.totalUs, basis: 'kernels' };
  return null;
}

const COMM = new Set(['HCCL', 'COMMUNICATION']);

/** Every rule that fires, highest severity (then largest share) first. */
export function adviseProfile(r: ProfileResult, rules: AdviceRules): Advice[] {
  const basis = stepBasis(r);
  const sev = (share: number | null): Severity =>
    share === null
      ? 'low'
      : share >= rules.severity.high
        ? 'high'
        : share >= rules.severity.medium
          ? 'medium'
          : 'low';
  const shareOf = (us: number) => (basis ? us / basis.us : null);
  const out: Advice[] = [];
  const slug = (id: string) => id.replace(/[.-](\w)/g, (_, c: string) => c.toUpperCase());
  const add = (
    id: string,
    share: number | null,
    params: Record<string, string | number>,
    evidence: unknown,
    severity?: Severity,
  ) =>
    out.push({
      id,
      severity: severity ?? sev(share),
      share,
      message: m(`advice.${slug(id)}.message`, params),
      suggestion: m(`advice.${slug(id)}.suggestion`, params),
      evidence,
    });
  const sum = (k: 'freeUs' | 'communicationNotOverlappedUs') =>
    r.steps.reduce((a, s) => a + s[k], 0);
  const stepsUs = r.steps.reduce((a, s) => a + s.totalUs, 0);
  const k = r.kernels;
  for (const rule of rules.rules) {
    switch (rule.kind) {
      case 'free':
      case 'uncovered-communication': {
        if (!stepsUs) break;
        const us = sum(rule.kind === 'free' ? 'freeUs' : 'communicationNotOverlappedUs');
        const share = us / stepsUs;
        if (share > rule.threshold)
          add(
            rule.id,
            share,
            { percent: pct(share), threshold: pct(rule.threshold) },
            {
              us,
              stepUs: stepsUs,
              steps: r.steps.length,
              threshold: rule.threshold,
            },
          );
        break;
      }
      case 'aicpu': {
        if (!k?.aicpuOps.length || k.maxUs < rule.minTaskUs) break;
        const us = k.aicpuOps.reduce((a, o) => a + o.us, 0);
        const share = shareOf(us);
        add(
          rule.id,
          share,
          {
            count: k.aicpuOps.reduce((a, o) => a + o.count, 0),
            ops: k.aicpuOps.map((o) => o.opType).join(', '),
            percent: share === null ? 0 : pct(share),
          },
          { ops: k.aicpuOps, us, basis: basis?.basis ?? null },
        );
        break;
      }
      case 'dynamic-shape': {
        const s = k?.opState;
        if (!k || !s || s.static > 0 || s.dynamic === 0) break;
        const us = Object.entries(k.byTaskType)
          .filter(([t]) => !COMM.has(t))
          .reduce((a, [, v]) => a + v.us, 0);
        const share = shareOf(us);
        add(
          rule.id,
          share,
          { count: s.dynamic },
          { ...s, computeUs: us, basis: basis?.basis ?? null },
        );
        break;
      }
      case 'op-dispatch': {
        const c = r.timeline?.opCompile;
        if (!c || c.count < rule.minCount) break;
        const share = shareOf(c.us);
        add(
          rule.id,
          share,
          { count: c.count, threshold: rule.minCount },
          { ...c, basis: basis?.basis ?? null },
        );
        break;
      }
      case 'dataloader': {
        const slow = r.timeline?.slowDataloader ?? [];
        if (!slow.length) break;
        const us = slow.reduce((a, d) => a + d.us, 0);
        add(
          rule.id,
          shareOf(us),
          { count: slow.length, maxMs: Math.round(Math.max(...slow.map((d) => d.us)) / 100) / 10 },
          { calls: slow.slice(0, 10), threshold: rules.thresholds.dataloaderUs },
        );
        break;
      }
      case 'slow-rank': {
        const over = (r.communication?.slowRank ?? []).filter((d) => d.ratio > rule.threshold);
        if (!over.length) break;
        const worst = over.reduce((a, b) => (b.ratio > a.ratio ? b : a));
        add(
          rule.id,
          worst.ratio,
          {
            dimension: worst.dimension,
            rank: worst.maxRank,
            percent: pct(worst.ratio),
            dimensions: [...new Set(over.map((d) => d.dimension))].join(', '),
          },
          over.map((d) => ({
            step: d.step,
            dimension: d.dimension,
            maxRank: d.maxRank,
            minRank: d.minRank,
            ratio: d.ratio,
          })),
        );
        break;
      }
      case 'slow-link': {
        const over = (r.communication?.slowLink ?? []).filter((l) => l.ratio >= rule.threshold);
        if (!over.length) break;
        const worst = over.reduce((a, b) => (b.ratio > a.ratio ? b : a));
        const s = rule.severityByRatio;
        add(
          rule.id,
          null,
          {
            transport: worst.transport,
            rank: worst.minRank,
            min: Math.round(worst.minGBps * 100) / 100,
            mean: Math.round(worst.meanGBps * 100) / 100,
            percent: pct(worst.ratio),
          },
          over,
          worst.ratio >= s.high ? 'high' : worst.ratio >= s.medium ? 'medium' : 'low',
        );
        break;
      }
      case 'env-vars': {
        if (!r.env) break;
        const env = r.env;
        const hits = rule.vars.filter((v) => {
          const value = (env[v.name] ?? '').trim();
          switch (v.when) {
            case 'set':
              return value !== '';
            case 'set-not':
              return value !== '' && value !== v.value;
            case 'unset-or-below':
              return value === '' || Number(value) < Number(v.value);
            case 'unset-or-zero':
              return value === '' || Number(value) === 0;
            case 'lacks':
              return !value.replace(/\s/g, '').includes(v.value ?? '');
            case 'equals':
              return value === v.value;
          }
          return false;
        });
        if (!hits.length) break;
        add(
          rule.id,
          null,
          { vars: hits.map((h) => h.name).join(', '), count: hits.length },
          hits.map((h) => ({
            name: h.name,
            value: env[h.name] ?? null,
            rule: h.when,
            expected: h.value ?? null,
          })),
        );
        break;
      }
      case 'fusible': {
        if (!k) break;
        const seen = rule.present.filter((t) => k.byOpType[t]);
        if (seen.length < rule.needs || rule.absent.some((t) => k.byOpType[t])) break;
        const us = seen.reduce((a, t) => a + k.byOpType[t]!.us, 0);
        add(
          rule.id,
          shareOf(us),
          { ops: seen.join(', '), api: rule.api },
          {
            ops: seen.map((t) => ({
              opType: t,
              us: k.byOpType[t]!.us,
              count: k.byOpType[t]!.count,
            })),
            api: rule.api,
          },
        );
        break;
      }
    }
  }
  const rank = { high: 0, medium: 1, low: 2 };
  return out.sort((a, b) => rank[a.severity] - rank[b.severity] || (b.share ?? 0) - (a.share ?? 0));
}
