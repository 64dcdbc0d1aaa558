import { config } from 'zod';

// The renderer's CSP has no 'unsafe-eval': zod's compiled fast path would first test for eval
// with `new Function`, which the policy blocks and reports on every load. Imported first.
config({ jitless: true });
