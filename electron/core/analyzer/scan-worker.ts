// A scan worker thread: kept alive between scans (its compiled parser is the expensive part), it
// analyses the Python files of each request and posts one result per file, then `done`.
import { parentPort } from 'node:worker_threads';
import type { Language } from '../../../shared/api';
import { analyzePythonFile } from './python-file';
import { pythonParser } from './python-parser';
import { loadRules } from './rules';

export interface ScanRequest {
  id: number;
  files: { abs: string; rel: string }[];
  lang: Language;
}

const parser = await pythonParser();
const rules = loadRules();
parentPort!.on('message', (req: ScanRequest) => {
  for (const f of req.files)
    parentPort!.postMessage({
      id: req.id,
      result: analyzePythonFile(parser, f.abs, f.rel, rules, req.lang),
    });
  parentPort!.postMessage({ id: req.id, done: true });
});
