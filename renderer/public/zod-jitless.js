// zod reads its settings from this object when it loads. The renderer's CSP has no
// 'unsafe-eval', and zod's compiled fast path first tests for eval with `new Function`, which the
// policy blocks and reports on every load; jitless skips the test. A classic script: it runs
// before the app's module scripts (deferred), so before zod is loaded.
globalThis.__zod_globalConfig = { jitless: true };
