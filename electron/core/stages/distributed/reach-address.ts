import type { HostNic } from '../../../../shared/stages/distributed/api';

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/;
const loopback = (a: string) => a.startsWith('127.');
const linkLocal = (a: string) => a.startsWith('169.254.');

/**
 * The address the other hosts of a collective reach this host on (torchrun's rendezvous, gloo's
 * sockets, HCCL_IF_IP). The registered SSH hostname is often not it: an alias from ssh_config, a
 * name only this workstation resolves, or a jump host's forward. In order: HCCL_IF_IP as the job
 * would see it (the user chose it); the host's own end of our SSH connection ($SSH_CONNECTION),
 * an address on one of its NICs that something outside reached; the registered hostname when it
 * is an IPv4 address on one of its NICs; the first IPv4 of an up NIC. Loopback only when nothing
 * else exists (simulated hosts sharing one machine), and the registered name as the last resort.
 */
export function reachAddress(
  env: Record<string, string>,
  sshConnection: string,
  registered: string,
  nics: HostNic[],
): string {
  if (IPV4.test(env.HCCL_IF_IP ?? '')) return env.HCCL_IF_IP!;
  const own = new Set(nics.flatMap((n) => n.addresses).filter((a) => IPV4.test(a)));
  const server = sshConnection.trim().split(/\s+/)[2] ?? '';
  const candidates = [
    server,
    registered,
    ...nics.filter((n) => n.up).flatMap((n) => n.addresses.filter((a) => IPV4.test(a))),
  ].filter((a) => IPV4.test(a) && (own.has(a) || a === server));
  return (
    candidates.find((a) => !loopback(a) && !linkLocal(a)) ??
    candidates.find((a) => !linkLocal(a)) ??
    registered
  );
}
