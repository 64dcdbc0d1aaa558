import { msg, type MsgParam } from '../../shared/api/text';

// Node's error text ("ENOENT: no such file or directory, stat '/x'") is English and repeats the
// path the sentence around it already names: the common causes are told in the reader's language.
const CAUSES: Record<string, string> = {
  ENOENT: 'noSuchPath',
  ENOTDIR: 'notAFolderOnPath',
  EACCES: 'permissionDenied',
  EPERM: 'permissionDenied',
  EISDIR: 'isAFolder',
  ELOOP: 'symlinkLoop',
  ENAMETOOLONG: 'nameTooLong',
  EMFILE: 'tooManyOpen',
  ENFILE: 'tooManyOpen',
  EIO: 'ioError',
};

/** Why a file system call failed, as a message parameter: a key for a known cause, else Node's text. */
export function fsErrorText(err: unknown): MsgParam {
  const code = (err as { code?: unknown } | null)?.code;
  const cause = typeof code === 'string' ? CAUSES[code] : undefined;
  if (cause) return msg(`errors.fs.${cause}`);
  return err instanceof Error ? err.message : String(err);
}
