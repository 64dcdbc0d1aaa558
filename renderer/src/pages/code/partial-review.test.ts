import { describe, expect, it } from 'vitest';
import { partialAcceptance, withoutRejected } from './partial-review';

const original = ['import torch', 'x = 1', 'y = torch.cuda.current_device()', 'z = 3', ''].join(
  '\n',
);
const proposed = [
  'import torch',
  'import torch_npu',
  'x = 1',
  'y = torch.npu.current_device()',
  'z = 3',
  '',
].join('\n');

describe('a review accepted part way, reopened', () => {
  it('names the proposal changes the saved text took, as the diff view keys them', () => {
    const onlySecond = original.replace('torch.cuda', 'torch.npu');
    expect(partialAcceptance(original, proposed, onlySecond)).toEqual({
      accepted: new Set(['3:3']),
    });
    const onlyImport = original.replace('import torch\n', 'import torch\nimport torch_npu\n');
    expect(partialAcceptance(original, proposed, onlyImport)).toEqual({
      accepted: new Set(['1:0']),
    });
  });

  it('is not partial when every change, none, or a hand edit is in the saved text', () => {
    expect(partialAcceptance(original, proposed, proposed)).toBeNull();
    expect(partialAcceptance(original, proposed, original)).toBeNull();
    const handEdit = original.replace('torch.cuda', 'torch.xpu');
    expect(partialAcceptance(original, proposed, handEdit)).toBeNull();
  });
});

describe('changes rejected one by one, reopened', () => {
  it('shows the proposal with just those changes put back to the original', () => {
    const { text, kept } = withoutRejected(original, proposed, new Set(['3:3']));
    expect(text).toBe(proposed.replace('torch.npu', 'torch.cuda'));
    expect(kept).toEqual(new Set(['3:3']));
    // an added line rejected is gone again
    expect(withoutRejected(original, proposed, new Set(['1:0'])).text).toBe(
      original.replace('torch.cuda', 'torch.npu'),
    );
    expect(withoutRejected(original, proposed, new Set(['1:0', '3:3'])).text).toBe(original);
  });

  it('keeps line endings, and ignores keys that name no change of the proposal', () => {
    const crlf = (t: string) => t.replace(/\n/g, '\r\n');
    expect(withoutRejected(crlf(original), crlf(proposed), new Set(['3:3'])).text).toBe(
      crlf(proposed.replace('torch.npu', 'torch.cuda')),
    );
    const stale = withoutRejected(original, proposed, new Set(['2:2']));
    expect(stale).toEqual({ text: proposed, kept: new Set() });
  });
});
