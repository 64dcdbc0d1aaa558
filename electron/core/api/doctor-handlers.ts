import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { SettingsStore } from '../settings/settings-store';
import { diagnosePath, diagnoseText } from '../doctor/diagnose';
import type { Handlers } from './registry';

/** The error doctor's methods: pasted text is diagnosed in memory, a path is streamed. */
export function doctorHandlers(s: { settings: SettingsStore }): Pick<Handlers, 'doctor.diagnose'> {
  return {
    'doctor.diagnose': ({ text, path, lang }) => {
      if (path === '-') throw new AmwError('VALIDATION', msg('errors.text.stdinForCli'));
      const language = lang ?? s.settings.get().language;
      return path === undefined ? diagnoseText(text ?? '', language) : diagnosePath(path, language);
    },
  };
}
