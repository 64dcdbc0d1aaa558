import type { DomainHandlers, MethodsOf, Services } from '../services';

export function liveHandlers(s: Services): DomainHandlers<MethodsOf<'monitor' | 'terminal'>> {
  return {
    'monitor.start': async ({ name, intervalSec, password }) => ({
      monitorId: await s.live.startMonitor(
        name,
        // the built-in host is this machine: the loop runs as a child process, no SSH
        s.hosts.isLocal(name)
          ? null
          : { target: s.hosts.target(name), opts: s.hosts.connectOptions(name, password) },
        intervalSec,
      ),
    }),
    'monitor.stop': ({ monitorId }) => {
      s.live.stopMonitor(monitorId);
      return { ok: true as const };
    },
    'terminal.open': async ({ name, cols, rows, password }) => ({
      terminalId: await s.live.openTerminal(
        s.hosts.target(name),
        s.hosts.connectOptions(name, password),
        cols,
        rows,
      ),
    }),
    'terminal.input': ({ terminalId, data }) => {
      s.live.input(terminalId, data);
      return { ok: true as const };
    },
    'terminal.resize': ({ terminalId, cols, rows }) => {
      s.live.resize(terminalId, cols, rows);
      return { ok: true as const };
    },
    'terminal.close': ({ terminalId }) => {
      s.live.closeTerminal(terminalId);
      return { ok: true as const };
    },
  };
}
