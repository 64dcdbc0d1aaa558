/**
 * The distributed stage's host picker: the hosts it offers (the session's, then every other known
 * host, this machine `local` among them when it is there) and the hosts a run starts on — only
 * hosts the picker shows checked. It once hid `local` while still running on it.
 */
export function hostChoices(sessionHosts: string[], known: string[]): string[] {
  return [...new Set([...sessionHosts, ...known])];
}

/** What a run starts on: the user's picks, else the session's hosts; never a host not offered. */
export function hostsToRun(
  picked: string[] | null,
  sessionHosts: string[],
  choices: string[],
): string[] {
  return (picked ?? sessionHosts).filter((h) => choices.includes(h));
}
