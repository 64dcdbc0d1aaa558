// Type-checks the Node side (electron/, shared/, tests) and the browser side (renderer/) against
// their own libraries: the renderer gets DOM types and no Node types, the engine the reverse.
import { execFileSync } from 'node:child_process';

const tsc = 'node_modules/typescript/bin/tsc';
for (const project of ['tsconfig.json', 'tsconfig.web.json']) {
  execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' });
}
console.log('typecheck: ok');
