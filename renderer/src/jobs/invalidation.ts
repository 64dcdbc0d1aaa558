import { useQueryClient } from '@tanstack/react-query';
import { FINISHED_JOB_STATUSES, type JobRecord, type MethodName } from '../../../shared/api';
import { useEvent } from '../api';
import { LIST_INPUT } from '../components/JobsDrawer';
import { stageUi } from '../stages/registry';

const HOSTS: readonly MethodName[] = ['hosts.list', 'hosts.get', 'fleet.table', 'inventory.list'];
/** What a renamed host's name was written into: sessions, their timelines, projects, reports. */
const RENAMED: readonly MethodName[] = [
  'sessions.get',
  'sessions.list',
  'sessions.timeline',
  'sessions.compare',
  'projects.list',
  'reports.build',
];

/**
 * What a finished job makes stale, by job kind: the one list, instead of each page listening
 * for the jobs it cares about. `stage.*` is every stage run (whose own extras its UI module
 * lists in `invalidates`); a kind missing here refreshes nothing but the jobs list.
 */
export const JOB_INVALIDATES: Readonly<Record<string, readonly MethodName[]>> = {
  'stage.*': ['sessions.get', 'sessions.list', 'sessions.compare', 'stages.get', 'reports.build'],
  'code.scan': ['code.scans', 'code.get'],
  inventory: HOSTS,
  'fleet.inventory': HOSTS,
  'maintenance.backup': [],
  'maintenance.check': [],
};

const STAGE_KIND = /^stage\.(.+)$/;

/** The methods whose queries a finished job of this kind makes stale. */
export function invalidatedBy(kind: string): MethodName[] {
  const out = new Set<MethodName>(JOB_INVALIDATES[kind] ?? []);
  for (const [pattern, methods] of Object.entries(JOB_INVALIDATES))
    if (pattern.endsWith('.*') && kind.startsWith(pattern.slice(0, -1)))
      methods.forEach((m) => out.add(m));
  const stage = STAGE_KIND.exec(kind)?.[1];
  if (stage) stageUi(stage)?.invalidates?.forEach((m) => out.add(m));
  return [...out];
}

/**
 * The app's one `job.updated` listener (mounted once, in App): keeps the jobs list current
 * without polling, and when a job finishes refreshes what `invalidatedBy` says.
 */
export function useJobFeed(): void {
  const client = useQueryClient();
  useEvent('job.updated', (job: JobRecord) => {
    client.setQueryData<JobRecord[]>(['jobs.list', LIST_INPUT], (old = []) => {
      const rest = old.filter((j) => j.id !== job.id);
      return [job, ...rest]
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .slice(0, LIST_INPUT.limit);
    });
    if (!FINISHED_JOB_STATUSES.includes(job.status)) return;
    for (const m of invalidatedBy(job.kind)) void client.invalidateQueries({ queryKey: [m] });
  });
}

/**
 * The app's one `hosts.changed` listener (mounted once, in App): a host added, changed or removed
 * anywhere — this window, another tab on `amw serve`, the CLI — refreshes every host list shown,
 * such as the new-session dialog's picker (it once listened on the hosts page only, so a host
 * added elsewhere was missing there until a reload).
 */
export function useHostFeed(): void {
  const client = useQueryClient();
  useEvent('hosts.changed', (e) => {
    for (const m of e.renamedFrom ? [...HOSTS, ...RENAMED] : HOSTS)
      void client.invalidateQueries({ queryKey: [m] });
  });
}
