import { closeSync, openSync, readSync } from 'node:fs';
import type { TensorReader } from './compare';

/**
 * Tensor mode's two local tensor files, read one output at a time at its offset: the compare
 * holds one module's pair of slices, never either file whole. A slice the file does not hold
 * (cut short) reads as null, and the compare says so for that output.
 */
export function openTensorFiles(files: {
  baseline: string;
  target: string;
}): TensorReader & { close: () => void } {
  const fds = { baseline: openSync(files.baseline, 'r'), target: openSync(files.target, 'r') };
  const reader = ((side, data) => {
    const buf = Buffer.alloc(data.count * 4);
    const got = readSync(fds[side], buf, 0, buf.length, data.offset);
    if (got !== buf.length) return null;
    return new Float32Array(buf.buffer, buf.byteOffset, data.count);
  }) as TensorReader & { close: () => void };
  reader.close = () => {
    closeSync(fds.baseline);
    closeSync(fds.target);
  };
  return reader;
}
