import { describe, expect, it } from 'vitest';
import { hostChoices, hostsToRun } from './launch-hosts';

describe('the distributed host picker and what runs agree', () => {
  it('offers the session’s local host, checked, so the run on it is visible', () => {
    const choices = hostChoices(['local', 'node1'], ['node1', 'node2', 'local']);
    expect(choices).toEqual(['local', 'node1', 'node2']);
    expect(hostsToRun(null, ['local', 'node1'], choices)).toEqual(['local', 'node1']);
  });

  it('runs on exactly what the user left checked', () => {
    const choices = hostChoices(['local', 'node1'], ['node2']);
    expect(hostsToRun(['node1'], ['local', 'node1'], choices)).toEqual(['node1']);
    expect(hostsToRun([], ['local', 'node1'], choices)).toEqual([]);
  });

  it('never starts on a host the picker does not show', () => {
    expect(hostsToRun(['gone'], ['node1'], hostChoices(['node1'], []))).toEqual([]);
  });
});
