import { parseKeyEqualsValue } from './key-value';

/**
 * Version facts from the files an Ascend host keeps. Each reader returns null for "absent" and
 * says why a present file could not be read, instead of guessing.
 */
export interface VersionRead {
  version: string | null;
  warnings: string[];
  fields: Record<string, string>;
}

const read = (
  text: string | null | undefined,
  pick: (v: Record<string, string>) => string | undefined,
  what: string,
): VersionRead => {
  if (text === null || text === undefined) return { version: null, warnings: [], fields: {} };
  const { values, warnings } = parseKeyEqualsValue(text);
  const version = pick(values) ?? null;
  if (!version) warnings.push(`${what}: no version line found`);
  return { version, warnings, fields: values };
};

/** ascend_toolkit_install.info: `version=8.1.RC1`. */
export const cannFromToolkitInfo = (text: string | null | undefined) =>
  read(text, (v) => v.version, 'ascend_toolkit_install.info');

/**
 * version.cfg: `toolkit_running_version=[7.6.T13.0.B094:8.0.T63]`; the CANN version is after
 * the colon.
 */
export function cannFromVersionCfg(text: string | null | undefined): VersionRead {
  return read(
    text,
    (v) => {
      const raw =
        v.toolkit_installed_version ?? v.toolkit_running_version ?? v.runtime_running_version;
      // `[component:version]`, read with indexOf (the regex /:([^\]]+)\]/ is quadratic)
      if (!raw) return undefined;
      const colon = raw.indexOf(':');
      const close = colon < 0 ? -1 : raw.indexOf(']', colon + 1);
      return close > colon + 1 ? raw.slice(colon + 1, close) : undefined;
    },
    'version.cfg',
  );
}

/** driver/version.info: prefer package_version (Version= can hold a component version). */
export const driverFromVersionInfo = (text: string | null | undefined) =>
  read(
    text,
    (v) => v.package_version ?? v.Version ?? v.DriverVersion ?? v.version,
    'driver version.info',
  );

/** firmware/version.info: `Version=7.7.0.1.231` (a different numbering from the driver). */
export const firmwareFromVersionInfo = (text: string | null | undefined) =>
  read(text, (v) => v.Version ?? v.version, 'firmware version.info');
