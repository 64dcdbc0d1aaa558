import { knowledgeNamespaces } from '../../knowledge/messages';
import { STAGE_DEFINITIONS, stageDefinition } from '../../stages/registry';
import { arch, platform } from 'node:os';
import { backupDatabase } from '../../maintenance/backup';
import { checkStore } from '../../maintenance/check';
import { appVersion, PRODUCT_NAME } from '../../paths';
import type { DomainHandlers, MethodsOf, Services } from '../services';

export function appHandlers(
  s: Services,
): DomainHandlers<MethodsOf<'app' | 'settings' | 'jobs' | 'maintenance'>> {
  return {
    'app.info': () => ({
      name: PRODUCT_NAME,
      version: appVersion(),
      schemaVersion: s.schemaVersion,
      dataDir: s.location.dataDir,
      dbPath: s.location.dbPath,
      workDir: process.cwd(),
      platform: `${platform()}-${arch()}`,
      node: process.versions.node,
      canRememberSecrets: s.hosts.secrets.available,
      stages: s.knowledge().stages.order.map((id) => {
        const def = stageDefinition(id);
        return {
          id,
          built: !!def,
          runsOn: def?.shared.runsOn ?? null,
          name: def ? null : (s.knowledge().stages.names[id] ?? null),
        };
      }),
      knowledge: {
        stages: Object.fromEntries(
          STAGE_DEFINITIONS.filter((d) => d.knowledge).map((d) => [d.shared.id, d.knowledge!()]),
        ),
        versionMatrix: {
          rows: s.knowledge().versions.matrix.length,
          recommended: {
            torchNpu: s.knowledge().versions.recommended.torchNpu,
            torch: s.knowledge().versions.recommended.torch,
            cann: s.knowledge().versions.recommended.cann,
          },
        },
      },
    }),
    'app.messages': () => knowledgeNamespaces(),
    'settings.get': () => s.settings.get(),
    'settings.set': (patch) => {
      const next = s.settings.set(patch);
      s.bus.emit('settings.changed', next);
      return next;
    },
    'jobs.list': (input) => s.jobs.list(input),
    'jobs.get': ({ id }) => s.jobs.get(id),
    'jobs.cancel': ({ id }) => s.jobs.cancel(id),
    'maintenance.backup': () => ({
      jobId: s.jobs.start('maintenance.backup', {}, (ctx) =>
        backupDatabase(s.db, s.location.dataDir, ctx),
      ).id,
    }),
    'maintenance.check': () => ({
      jobId: s.jobs.start('maintenance.check', {}, (ctx) => checkStore(s.db, s.artifacts, ctx)).id,
    }),
  };
}
