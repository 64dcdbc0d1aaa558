import type * as z from 'zod';

/**
 * One knowledge file's text, parsed and validated: a broken file fails loudly, naming itself and
 * the field, so a bad edit to resources/knowledge never becomes a silent wrong threshold.
 */
export function parseKnowledgeFile<T>(text: string, file: string, schema: z.ZodType<T>): T {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${file} is not valid: it is not JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  // Without zod's compiled fast path: a file is validated once per process, and compiling that
  // path (code generated at run time, never in V8's code cache) costs more than it saves.
  const parsed = schema.safeParse(doc, { jitless: true });
  if (!parsed.success)
    throw new Error(
      `${file} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
