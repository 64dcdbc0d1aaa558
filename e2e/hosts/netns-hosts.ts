import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore } from '../../electron/core/db/artifacts';
import { openStore } from '../../electron/core/db/open';
import { EventBus } from '../../electron/core/events';
import { HostKeyPrompts } from '../../electron/core/hosts/host-key-prompts';
import { HostService } from '../../electron/core/hosts/host-service';
import { HostRepository } from '../../electron/core/hosts/repository';
import { SecretStore } from '../../electron/core/hosts/secrets';
import type { CollectiveHost } from '../../electron/core/stages/distributed/collective';
import type { NetnsFleet } from './netns';

/**
 * A fleet's hosts registered in a real store and HostService (SQLite, pooled SSH, known_hosts),
 * as a user adds them: what a stage run gets, here for tests and benches that drive the engine's
 * host layer directly.
 */
export interface FleetService {
  hosts: HostService;
  repo: HostRepository;
  /** The fleet as runCollective takes it (CPU hosts unless said otherwise). */
  collectiveHosts(opts?: { hasNpu?: boolean; npuCount?: number }): CollectiveHost[];
  close(): void;
}

export function fleetService(fleet: NetnsFleet, group = 'fleet'): FleetService {
  const home = mkdtempSync(join(tmpdir(), 'amw-fleet-store-'));
  const { db } = openStore(join(home, 'amw.db'));
  const bus = new EventBus();
  const repo = new HostRepository(db);
  const hosts = new HostService(
    repo,
    new HostKeyPrompts(bus, 'accept-new'),
    new ArtifactStore(db, home),
    bus,
    { knownHostsFile: join(home, 'known_hosts'), userKnownHostsFiles: [] },
    new SecretStore(db, null),
  );
  for (const h of fleet.hosts)
    repo.add({
      name: h.name,
      hostname: h.address,
      port: h.sim.port,
      username: h.sim.user,
      identityFile: h.sim.clientKey,
      group,
    });
  return {
    hosts,
    repo,
    collectiveHosts: ({ hasNpu = false, npuCount = 0 } = {}) =>
      fleet.hosts.map((h) => ({
        name: h.name,
        transport: hosts.transport(h.name),
        address: h.address,
        npuCount,
        hasNpu,
      })),
    close() {
      hosts.pool.closeAll();
      db.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
