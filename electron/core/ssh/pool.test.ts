import { describe, expect, it } from 'vitest';
import { poolKey } from './pool';

describe('which logins share a pooled connection', () => {
  const hop = { username: 'u', host: 'h', port: 22 };
  it('the same user@host:port with other keys, or another password, is another connection', () => {
    expect(poolKey(hop)).toBe(poolKey({ ...hop }));
    expect(poolKey({ ...hop, identityFiles: ['/k1'] })).not.toBe(
      poolKey({ ...hop, identityFiles: ['/k2'] }),
    );
    expect(poolKey(hop, 'right')).not.toBe(poolKey(hop, 'wrong'));
    expect(poolKey(hop, 'same')).toBe(poolKey(hop, 'same'));
    // the password itself is nowhere in the key
    expect(poolKey(hop, 'hunter2')).not.toContain('hunter2');
  });

  it('a crafted key path cannot make a direct login read as one through a jump', () => {
    const direct = { ...hop, identityFiles: ['k] > u@h2:22 [j'] };
    const jumped = {
      username: 'u',
      host: 'h2',
      port: 22,
      identityFiles: ['j'],
      jumps: [{ ...hop, identityFiles: ['k'] }],
    };
    expect(poolKey(direct)).not.toBe(poolKey(jumped));
  });
});
