import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHARED_STAGES } from '../../shared/stages';

// issue 12: a stage's UI lives in renderer/src/stages/<id>/ and one registry line; the session
// view, the shared stage parts and the job map work from app.info and the registry alone
const DIRS = ['renderer/src/pages/sessions', 'renderer/src/stages/shared', 'renderer/src/jobs'];

describe('renderer: stage ids stay in their own folders', () => {
  it('the session view, the shared stage parts and the job map name no stage', () => {
    const ids = SHARED_STAGES.map((s) => s.id);
    for (const dir of DIRS)
      for (const file of readdirSync(dir).filter((f) => /\.tsx?$/.test(f) && !/\.test\./.test(f))) {
        const src = readFileSync(join(dir, file), 'utf8');
        for (const id of ids)
          expect(src, `${dir}/${file} names the stage ${id}`).not.toMatch(
            new RegExp(`['"\`]${id}['"\`]`),
          );
      }
  });
});
