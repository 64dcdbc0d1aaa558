import { describe, expect, it } from 'vitest';
import { SHARED_STAGES } from './index';
import { STAGE_MESSAGES, STAGE_NAMESPACES, stageNs } from './namespaces';

describe('the stages’ messages, registered apart from the stages', () => {
  it('are every stage’s own dictionaries, and only those', () => {
    expect(Object.keys(STAGE_MESSAGES)).toEqual(SHARED_STAGES.map((s) => s.id));
    for (const s of SHARED_STAGES) {
      expect(STAGE_MESSAGES[s.id]!.en, s.id).toBe(s.messages.en);
      expect(STAGE_MESSAGES[s.id]!['zh-CN'], s.id).toBe(s.messages['zh-CN']);
    }
  });

  it('are i18next namespaces named after the stage', () => {
    expect(Object.keys(STAGE_NAMESPACES)).toEqual(SHARED_STAGES.map((s) => stageNs(s.id)));
    expect(STAGE_NAMESPACES['stage-code']).toBe(STAGE_MESSAGES.code);
  });
});
