import { MAX_STDIN_BYTES, readBounded } from './io';
import { runCli } from './program';

/** Process entry of `amw`: wires the real stdio and signals, then exits with the CLI's code. */
/** How long a command has to stop cleanly after SIGTERM before the process ends anyway. */
const TERM_GRACE_MS = 3000;

const interrupted = new Promise<void>((resolve) => {
  const first = (signal: NodeJS.Signals) => {
    // The first Ctrl+C asks the command to stop cleanly (cancel its job, close the server);
    // a second one ends the process at once. SIGTERM asks the same, and is obeyed in any case
    // after a grace period: a command that does not listen must not make the process unkillable.
    const code = signal === 'SIGTERM' ? 143 : 130;
    process.once('SIGINT', () => process.exit(130));
    process.once('SIGTERM', () => process.exit(143));
    if (signal === 'SIGTERM') setTimeout(() => process.exit(code), TERM_GRACE_MS).unref();
    resolve();
  };
  process.once('SIGINT', first);
  process.once('SIGTERM', first);
});

// A reader that stops early (`amw scan … | head`) closes the pipe: the output it did not want is
// not an error, and the command ends quietly instead of dying on an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });

// no top-level await: the same entry is also bundled as CommonJS (scripts/build.mjs)
void runCli(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
  interrupted: () => interrupted,
  stdinStream: () => process.stdin,
  readStdin: async () => (await readBounded(process.stdin, MAX_STDIN_BYTES)).toString('utf8'),
}).then((code) => {
  process.exitCode = code;
  // The process ends once what it wrote has reached stdout and stderr (a write's callback runs
  // when the writes before it are out). Left to end by itself, Node first tore V8's heap down
  // page by page: ~10 ms of an empty `amw scan`, more after a large one. Commands have closed
  // what they opened by now (withCore), and the 'exit' handlers (the code cache) still run.
  // Forced anyway if a stream never drains.
  const flushed = (stream: NodeJS.WriteStream) =>
    new Promise<void>((resolve) => stream.write('', () => resolve()));
  void flushed(process.stdout)
    .then(() => flushed(process.stderr))
    .then(() => process.exit(code));
  setTimeout(() => process.exit(code), 2000).unref();
});
