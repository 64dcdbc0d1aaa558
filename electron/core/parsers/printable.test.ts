import { describe, expect, it } from 'vitest';
import { printable, printableJson } from './printable';

// Every UTF-16 unit, lone surrogates included: a hostile file name or host text can hold any.
const EVERY_UNIT = Array.from({ length: 0x10000 }, (_, i) => String.fromCharCode(i)).join('');

describe('JSON made printable (printJson: `amw scan --json` and every other --json)', () => {
  const value = {
    file: `a${EVERY_UNIT}b`,
    list: ['\u001b]0;title\u0007', '\u202eevil', '\u009b6n'],
  };
  const json = printableJson(JSON.stringify(value, null, 2));

  it('is the same value, as valid JSON', () => {
    expect(JSON.parse(json)).toEqual(value);
  });

  it('holds nothing printable() would escape: the CLI writes it without a second pass', () => {
    expect(printable(json, { multiline: true })).toBe(json);
    for (const raw of ['\u001b', '\u0007', '\u009b', '\u202e', '\ufffd'])
      expect(json.includes(raw), JSON.stringify(raw)).toBe(false);
    expect(json).toContain('\\u202eevil');
  });
});
