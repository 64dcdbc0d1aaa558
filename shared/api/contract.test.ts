import { describe, expect, it } from 'vitest';
import { composeDomains, contract, METHOD_NAMES } from './index';

describe('the contract is composed from domains', () => {
  it('refuses a method two domains define, instead of letting one shadow the other', () => {
    expect(() => composeDomains({ 'a.get': 1, 'a.list': 2 }, { 'b.get': 3, 'a.get': 4 })).toThrow(
      /a\.get is defined by two domains/,
    );
  });

  it('holds every stage’s own methods beside the app’s', () => {
    expect(METHOD_NAMES).toContain('stages.run');
    expect(METHOD_NAMES).toContain('ops.get');
    expect(Object.keys(contract).length).toBe(new Set(METHOD_NAMES).size);
  });
});
