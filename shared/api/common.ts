import * as z from 'zod';

/** Methods that take nothing still take an object, so adding an option later is not a break. */
export const NoInput = z.object({}).strict();

export const Language = z.enum(['en', 'zh-CN']);
export type Language = z.infer<typeof Language>;

export const Theme = z.enum(['light', 'dark', 'system']);
export type Theme = z.infer<typeof Theme>;

/** ISO-8601 timestamp string, UTC. */
export type IsoTime = string;
