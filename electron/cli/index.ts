import { runCli } from './program';

/** Process entry of `amw`: wires the real stdio and signals, then exits with the CLI's code. */
const interrupted = new Promise<void>((resolve) => {
  const first = () => {
    // The first Ctrl+C asks the command to stop cleanly (cancel its job, close the server);
    // a second one ends the process at once.
    process.once('SIGINT', () => process.exit(130));
    resolve();
  };
  process.once('SIGINT', first);
  process.once('SIGTERM', first);
});

const code = await runCli(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
  interrupted: () => interrupted,
  stdinStream: () => process.stdin,
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
});
process.exitCode = code;
// Let stdout drain; an idle event loop then exits on its own. Force it only if something hangs.
setTimeout(() => process.exit(code), 2000).unref();
