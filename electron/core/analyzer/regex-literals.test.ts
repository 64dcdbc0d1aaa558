// The texts a rule's regex cannot match without decide which candidates are parsed
// (call-needs.ts): a literal the regex can do without would hide a finding. Read on written
// regexes, and checked on every match of every rule's argument and value regex in the real
// samples and ports.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pythonParser } from './python-parser';
import { leadingLiterals, requiredLiterals } from './regex-literals';
import { loadRules } from './rules';
import { realPythonFiles } from '../../../tests/support/python-samples';

describe('the texts every match of a regex holds', () => {
  it('are each alternative’s longest literal run, escapes read as what they stand for', () => {
    expect(requiredLiterals(String.raw`^torch\.tensor\((?![\s\S]*\bdevice\s*=)`)).toEqual([
      ['torch.tensor('],
    ]);
    expect(
      requiredLiterals(
        String.raw`-\s*(?:float\(\s*["']inf|math\.inf|torch\.inf)|float\(\s*["']-inf`,
      ),
    ).toEqual([['-'], ['float(', '-inf']]);
    expect(requiredLiterals(String.raw`keepdim\s*=\s*True`)).toEqual([['keepdim', '=', 'True']]);
    expect(requiredLiterals('tf32')).toEqual([['tf32']]);
    // a masked softmax's object: `(… + …)`, each part held
    expect(
      requiredLiterals(String.raw`(?:^|[^\w\].])\((?:[^()]|\([^()]*\))*\+(?:[^()])*\)$`),
    ).toEqual([['(', '+', ')']]);
  });

  it('leave out what a quantifier makes optional, and keep one of what `+` repeats', () => {
    expect(requiredLiterals('colou?r')).toEqual([['colo', 'r']]);
    expect(requiredLiterals('ab*cd')).toEqual([['a', 'cd']]);
    expect(requiredLiterals('x{0,2}yz')).toEqual([['yz']]);
    expect(requiredLiterals('ab+cde')).toEqual([['ab', 'cde']]);
    expect(requiredLiterals('abc+d')).toEqual([['abc', 'd']]);
  });

  it('are none where an alternative holds no literal, or the source is beyond this reading', () => {
    expect(requiredLiterals(String.raw`[Cc][Uu][Dd][Aa]|\.cu\b`)).toBeNull();
    expect(requiredLiterals(String.raw`^[^,]*\+`)).toEqual([['+']]);
    expect(requiredLiterals(String.raw`(a)\1`)).toBeNull();
    expect(requiredLiterals(String.raw`(?<q>["'])x\k<q>`)).toBeNull();
    expect(requiredLiterals('.*')).toBeNull();
    // a `|` inside a group or a class does not split the regex
    expect(requiredLiterals('pre(?:a|b)post|[|]mid')).toEqual([['pre', 'post'], ['mid']]);
  });

  it('at the start: only what an anchored regex starts with', () => {
    expect(leadingLiterals('^True$')).toEqual(['True']);
    expect(leadingLiterals('^(?:True)$')).toBeNull();
    expect(leadingLiterals('^True$|^1$')).toEqual(['True', '1']);
    expect(leadingLiterals('True')).toBeNull();
    expect(leadingLiterals('^\\s*True')).toBeNull();
    expect(leadingLiterals('^Tr?ue')).toEqual(['T']);
    expect(leadingLiterals(String.raw`^\(x`)).toEqual(['(x']);
    // a quote of either kind: each, with what follows it
    expect(leadingLiterals(`^["']gpu["']$`)).toEqual(['"gpu', "'gpu"]);
    expect(leadingLiterals(`^["'](?:a|\\w+)$`)).toEqual(['"', "'"]);
    expect(leadingLiterals('^[a-z]x')).toBeNull();
  });
});

describe("the rules' argument and value regexes", () => {
  it('hold what is read from them wherever they match an argument in the real samples and ports', async () => {
    const regexes = loadRules().flatMap((r) => {
      const m = r.match as { argRegex?: string; argsRegex?: string; valueRegex?: string };
      return [m.argRegex, m.argsRegex, m.valueRegex].filter((x): x is string => !!x);
    });
    expect(regexes.length).toBeGreaterThan(5);
    // what those regexes are tested on: argument lists, arguments and keyword values, as written
    const texts = new Set<string>();
    const parser = await pythonParser();
    const files = realPythonFiles();
    for (const f of files) {
      const tree = parser.parse(readFileSync(f, 'utf8'))!;
      for (const list of tree.rootNode.descendantsOfType('argument_list')) {
        texts.add(list!.text);
        for (const a of list!.namedChildren) {
          texts.add(a!.text);
          const value = a!.type === 'keyword_argument' ? a!.childForFieldName('value') : null;
          if (value) texts.add(value.text);
        }
      }
      tree.delete();
    }
    let matched = 0;
    for (const source of regexes) {
      const re = new RegExp(source);
      const required = requiredLiterals(source);
      const leading = leadingLiterals(source);
      for (const text of texts) {
        if (!re.test(text)) continue;
        matched++;
        if (required)
          expect(
            required.some((runs) => runs.every((l) => text.includes(l))),
            `${source} ${text}`,
          ).toBe(true);
        if (leading)
          expect(
            leading.some((l) => text.startsWith(l)),
            `${source} ${text}`,
          ).toBe(true);
      }
    }
    expect(matched).toBeGreaterThan(20);
  });
});
