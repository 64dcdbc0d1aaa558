import type { TimelineEvent } from '../../../../shared/api';
import type { DomainHandlers, MethodsOf, Services } from '../services';

export function sessionsHandlers(
  s: Services,
): DomainHandlers<MethodsOf<'projects' | 'sessions' | 'checks'>> {
  return {
    'projects.create': (p) => s.sessions.createProject(p),
    'projects.list': () => s.sessions.projects(),
    'projects.update': ({ name, ...change }) => {
      change.targetHosts?.forEach((h) => s.hostRepo.get(h));
      return s.sessions.updateProject(name, change);
    },
    'sessions.create': (o) => {
      o.hosts?.forEach((h) => s.hostRepo.get(h));
      return s.sessions.session(s.sessions.createSession(o));
    },
    'sessions.list': ({ project }) => s.sessions.sessions(project),
    'sessions.get': ({ id }) => s.sessions.session(id),
    'sessions.setHosts': ({ id, hosts }) => {
      hosts.forEach((h) => s.hostRepo.get(h));
      s.sessions.setHosts(id, [...new Set(hosts)]);
      return s.sessions.session(id);
    },
    'checks.waive': ({ sessionId, checkId, host, reason, by }) => {
      s.sessions.waive(sessionId, host, checkId, reason, by);
      return { ok: true as const };
    },
    'checks.unwaive': ({ sessionId, checkId, host, by }) => {
      s.sessions.unwaive(sessionId, host, checkId, by.trim());
      return { ok: true as const };
    },
    'sessions.compare': ({ a, b }) => s.sessions.compare(a, b),
    'sessions.timeline': ({ id }) => {
      const review = s.reviews.review({ sessionId: id });
      const events: TimelineEvent[] = [
        ...s.sessions.history(id),
        ...s.code.reviewHistory(id).map((r) => ({ kind: 'code-review' as const, ...r })),
        ...review.comments.map((c) => ({
          kind: 'comment' as const,
          at: c.at,
          author: c.author,
          target: c.target,
          text: c.text,
        })),
        ...review.decisions.map((d) => ({
          kind: 'decision' as const,
          at: d.at,
          by: d.by,
          decision: d.decision,
          note: d.note,
        })),
      ];
      return events.sort((x, y) => y.at.localeCompare(x.at));
    },
  };
}
