import * as z from 'zod';
import { Report, REPORT_SCHEMA_ID } from './reports';

/** The JSON Schema (2020-12) of `amw.report/v1`, generated from the zod definition. */
export function reportJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(Report, { unrepresentable: 'any' }),
    $id: `https://ascend-migration-workbench/schemas/${REPORT_SCHEMA_ID.replace('/', '-')}.json`,
    title: 'Ascend Migration Workbench report (amw.report/v1)',
  };
}
