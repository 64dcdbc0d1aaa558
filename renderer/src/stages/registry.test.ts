import { describe, expect, it } from 'vitest';
import { SHARED_STAGES } from '../../../shared/stages';
import { invalidatedBy } from '../jobs/invalidation';
import { href, parseCodeRoute, parseSessionRoute } from '../routes';
import { STAGE_UIS, stageUi } from './registry';

describe('renderer stage registry', () => {
  it('has one UI per stage of this build, and none for a stage it lacks', () => {
    expect(STAGE_UIS.map((s) => s.id).sort()).toEqual(SHARED_STAGES.map((s) => s.id).sort());
    expect(stageUi('distributed')?.id).toBe('distributed');
    expect(stageUi('nosuchstage')).toBeUndefined();
  });
});

describe('job kinds → stale queries', () => {
  it('refreshes the session of every stage run, plus what the stage adds', () => {
    expect(invalidatedBy('stage.env')).toEqual(
      expect.arrayContaining(['sessions.get', 'sessions.list', 'stages.get']),
    );
    expect(invalidatedBy('stage.code')).toEqual(
      expect.arrayContaining(['sessions.get', 'code.scans', 'code.get']),
    );
    expect(invalidatedBy('stage.env')).not.toContain('code.scans');
  });

  it('refreshes hosts after an inventory, scans after a scan, nothing for an unknown kind', () => {
    expect(invalidatedBy('inventory')).toContain('hosts.get');
    expect(invalidatedBy('fleet.inventory')).toContain('fleet.table');
    expect(invalidatedBy('code.scan')).toEqual(['code.scans', 'code.get']);
    expect(invalidatedBy('no.such.kind')).toEqual([]);
  });
});

describe('routes', () => {
  it('builds a route per stage and reads it back', () => {
    expect(href.session(3, 'ops')).toBe('#/sessions/3/ops');
    expect(href.session(3)).toBe('#/sessions/3');
    expect(href.session(null)).toBe('#/sessions');
    expect(parseSessionRoute('3/ops')).toEqual({ id: 3, stage: 'ops' });
    expect(parseSessionRoute('3')).toEqual({ id: 3, stage: null });
    expect(parseSessionRoute('x')).toBeNull();
  });

  it('keeps #/code/SCAN/FILE@LINE, encoding each part of the path', () => {
    expect(href.scan(12, 'src/my model.py', 34)).toBe('#/code/12/src/my%20model.py@34');
    expect(href.scan(12)).toBe('#/code/12');
    expect(parseCodeRoute('12/src/my model.py@34')).toEqual({
      scanId: 12,
      file: 'src/my model.py',
      line: 34,
    });
    expect(parseCodeRoute('12')).toEqual({ scanId: 12, file: null, line: null });
    // an `@` in a file's name is part of the name; only a trailing @digits is a line
    expect(parseCodeRoute('12/cfg/model@v2.py')).toEqual({
      scanId: 12,
      file: 'cfg/model@v2.py',
      line: null,
    });
    expect(parseCodeRoute('12/cfg/model@v2.py@7')).toEqual({
      scanId: 12,
      file: 'cfg/model@v2.py',
      line: 7,
    });
  });
});
