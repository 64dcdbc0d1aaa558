// What a call must look like for a rule to take it, read on the text (call-needs.ts). The
// findings these decide are checked against a whole parse in relevant.test.ts; here, what each
// check answers where the text is written in ways the tree reads otherwise, and that every
// search stays near its call however large the file.
import { describe, expect, it } from 'vitest';
import { callMayMatch, callNeed, keywordLeads, valueMayMatch } from './call-needs';
import { sourceTokens } from './source-tokens';

/** callMayMatch for the call at the first `name(` of the text. */
function mayMatch(src: string, name: string, need: ReturnType<typeof callNeed>) {
  const start = src.indexOf(`${name}(`);
  return callMayMatch(src, sourceTokens(src), start, start + name.length, need!);
}

describe('what a call needs', () => {
  const scalar = callNeed([{ argRegex: String.raw`^torch\.tensor\((?![\s\S]*\bdevice\s*=)` }]);
  const masked = callNeed([{ argRegex: String.raw`^[^,]*\+`, argAssigned: true }]);
  const gated = callNeed([{ inProduct: true }]);

  it('is what the rules test, or nothing where one rule tests nothing', () => {
    expect(scalar).toEqual({ args: [['torch.tensor(']], above: false, product: false });
    expect(callNeed([{ stringArg: 'cuda' }])?.args).toEqual([['cuda']]);
    expect(callNeed([{ stringArg: 'cuda' }, {}])?.args).toBeNull();
    expect(masked?.above).toBe(true);
    expect(callNeed([])).toBeNull();
  });

  it('finds its text between the brackets, past strings and comments that hold brackets', () => {
    expect(mayMatch('y = torch.max(x, torch.tensor(0.0))', 'torch.max', scalar)).toBe(true);
    expect(mayMatch('y = torch.max(x, z)\nw = torch.tensor(1)', 'torch.max', scalar)).toBe(false);
    expect(mayMatch('y = torch.max(x, ")", # (\n torch.tensor(0))', 'torch.max', scalar)).toBe(
      true,
    );
    // never closed: the tree decides
    expect(mayMatch('y = torch.max(x, z', 'torch.max', scalar)).toBe(true);
  });

  it('reads a value given above from where the function starts, and no further up', () => {
    const body = (between: string) =>
      `def f(q, k, mask):\n    w = q @ k + mask\n${between}    return torch.softmax(w, -1)\n`;
    expect(mayMatch(body(''), 'torch.softmax', masked)).toBe(true);
    expect(
      mayMatch(
        `def g():\n    w = 1 + 2\n\n${body('').replace(' + mask', '')}`,
        'torch.softmax',
        masked,
      ),
    ).toBe(false);
    expect(
      mayMatch(
        `w = 1 + 2\n\nasync def h(w):\n    return torch.softmax(w, -1)\n`,
        'torch.softmax',
        masked,
      ),
    ).toBe(false);
    // a function that starts further up than a call's search reaches is left to the tree
    const long = body(`    x = 0\n`.repeat(4000)).replace(' + mask', '');
    expect(mayMatch(long, 'torch.softmax', masked)).toBe(true);
  });

  it('as a product: a `*` beside it, not `**`, through parentheses and line breaks', () => {
    expect(mayMatch('y = up * (act(g))', 'act', gated)).toBe(true);
    expect(mayMatch('y = act(g) *\\\n  up', 'act', gated)).toBe(true);
    expect(mayMatch('y = act(g) ** 2', 'act', gated)).toBe(false);
    expect(mayMatch('y = lin(act(g))', 'act', gated)).toBe(false);
  });
});

describe('what a keyword value needs', () => {
  const leads = keywordLeads([
    { match: { name: 'pin_memory', valueRegex: '^True$' } },
    { match: { name: 'num_warps' } },
    { match: { name: 'map_location', valueRegex: 'cuda' } },
  ]);

  it('is known only where every rule of the name anchors its value', () => {
    expect([...leads]).toEqual([['pin_memory', ['True']]]);
  });

  it('starts past spaces, line breaks and continuations; a comment first is left to the tree', () => {
    const at = (src: string) => valueMayMatch(src, src.indexOf('=') + 1, ['True']);
    expect(at('f(pin_memory=True)')).toBe(true);
    expect(at('f(pin_memory=\n    True)')).toBe(true);
    expect(at('f(pin_memory= \\\n True)')).toBe(true);
    expect(at('f(pin_memory=  # pinned\n True)')).toBe(true);
    expect(at('f(pin_memory=args.pin)')).toBe(false);
    expect(at('pin_memory == True')).toBe(false);
  });
});
