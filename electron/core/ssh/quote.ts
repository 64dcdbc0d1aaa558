/**
 * The one way a remote shell command is built. Every argument is single-quoted for POSIX sh, so
 * quotes, `$()`, backticks, globs, newlines and unicode reach the program as one literal argument.
 * Never concatenate user input into a command line anywhere else.
 */
export function shellQuote(arg: string): string {
  if (arg.includes('\0')) throw new Error('a shell argument cannot contain a NUL byte');
  if (arg !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `program arg1 arg2 …` with every part quoted. */
export function remoteCommand(program: string, ...args: string[]): string {
  return [program, ...args].map(shellQuote).join(' ');
}
