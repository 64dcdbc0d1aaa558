import * as z from 'zod';
import { method } from './define';
import { Language } from './common';

/** i18next namespace of the doctor's rule texts (`doctor-rules:<id>.title|cause|fix`). */
export const DOCTOR_RULES_NS = 'doctor-rules';

export const DOCTOR_CATEGORIES = [
  'environment',
  'version',
  'device',
  'operator',
  'memory',
  'hccl',
  'runtime',
  /** what unported CUDA code prints on a host without CUDA */
  'cuda',
] as const;
export type DoctorCategory = (typeof DOCTOR_CATEGORIES)[number];
export type DoctorSeverity = 'error' | 'warning' | 'info';

/** What proves a diagnosis: a stage and check of the workbench, and/or a command to run. */
export interface DoctorProof {
  /** A stage id of the migration (knowledge stages.json), built or not. */
  stage?: string;
  check?: string;
  command?: string;
}

export interface DoctorLink {
  title: string;
  url: string;
}

/** One log line a rule recognised, with the rule's explanation in the requested language. */
export interface DoctorMatch {
  rule: string;
  /** 1-based line number in `file` (or in the text given). */
  line: number;
  /** Relative to the folder diagnosed; absent for a single file, stdin or pasted text. */
  file?: string;
  /** The line as read: escape sequences removed, control bytes replaced, at most 4 KiB. */
  text: string;
  category: DoctorCategory;
  severity: DoctorSeverity;
  title: string;
  cause: string;
  fix: string;
  proof: DoctorProof;
  links: DoctorLink[];
}

/** A line that looks like an error but no rule knows. */
export interface DoctorUnmatched {
  line: number;
  file?: string;
  text: string;
}

/** Engine text as `{key, params}`: rendered by i18next in the renderer and the CLI. */
export interface DoctorNotice {
  key: string;
  params: Record<string, string | number>;
}

export interface DoctorResult {
  matches: DoctorMatch[];
  unmatched: DoctorUnmatched[];
  notices: DoctorNotice[];
  stats: {
    files: number;
    lines: number;
    bytes: number;
    /** NUL bytes were seen: some content is binary (it is still scanned, bytes replaced). */
    binary: boolean;
    /** Lines longer than the cap: only the part around a hit is kept. */
    longLines: number;
    /** Matches per rule beyond the cap: counted, not listed. */
    suppressed: { rule: string; count: number }[];
    unmatchedSuppressed: number;
    elapsedMs: number;
  };
}

/** Text pasted in the UI travels in one request (serve mode reads at most 1 MiB per frame). */
export const DOCTOR_MAX_TEXT = 900_000;

export const DoctorInput = z
  .object({
    /** A log as text (pasted, or a file read by the page). */
    text: z.string().max(DOCTOR_MAX_TEXT).optional(),
    /** A file or a plog folder on the machine the engine runs on. */
    path: z.string().min(1).max(4096).optional(),
    /** Language of cause and fix; default: the settings' language. */
    lang: Language.optional(),
  })
  .strict()
  .refine((v) => (v.text === undefined) !== (v.path === undefined), {
    message: 'give either text or path',
  });

export const doctorApi = {
  /** Every known failure in a log, in order, with cause and fix; unknown error lines listed. */
  'doctor.diagnose': method(DoctorInput).returns<DoctorResult>(),
};
