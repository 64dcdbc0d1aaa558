// A scan worker thread: kept alive between scans (its compiled parser is the expensive part), it
// analyses the Python files of each request and posts the results in batches, the last marked `done`.
import { parentPort } from 'node:worker_threads';
import type { Language } from '../../../shared/api';
import { analyzePythonFile, type PythonResult } from './python-file';
import { pythonParser } from './python-parser';
import { loadRules, withExtensionNames } from './rules';

export interface ScanRequest {
  id: number;
  files: { abs: string; rel: string }[];
  lang: Language;
  keepSources: boolean;
  /** ScanOptions.fileBudgetMs. */
  budgetMs?: number;
  /** The project's own CUDA extension modules (from its setup.py files). */
  extensionNames?: string[];
}

const BATCH = 25;
const parser = await pythonParser();
const rules = loadRules();
parentPort!.on('message', (req: ScanRequest) => {
  // results go back in batches: one message per file costs the main thread more than the batch
  let batch: PythonResult[] = [];
  const known = withExtensionNames(rules, req.extensionNames ?? []);
  for (const f of req.files) {
    batch.push(
      analyzePythonFile(parser, f.abs, f.rel, known, req.lang, req.keepSources, req.budgetMs),
    );
    if (batch.length === BATCH) {
      parentPort!.postMessage({ id: req.id, results: batch });
      batch = [];
    }
  }
  parentPort!.postMessage({ id: req.id, results: batch, done: true });
});
