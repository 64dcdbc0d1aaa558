// Launch scripts, Dockerfiles, CI workflows and CMake files are untrusted text: read a line at a
// time with patterns that stay linear on any line, whatever it repeats.
import { describe, expect, it } from 'vitest';
import type { AddFinding } from './dependency-files';
import { scanScript } from './script-files';

function scan(src: string, rel = 'run.sh') {
  const found: { ruleId: string; line: number; column: number }[] = [];
  const finding: AddFinding = (ruleId, _file, at) =>
    found.push({ ruleId, line: at.line, column: at.column });
  scanScript(rel, src, 'en', finding);
  return found;
}

describe('scripts and configs', () => {
  it('hostile lines: long repetitions of what the patterns look for end at once, nothing invented', () => {
    const n = 200_000;
    for (const [src, rel] of [
      [`project(x ${'LANGUAGES '.repeat(n)}`, 'CMakeLists.txt'],
      [`${'--num-gpus '.repeat(n)}`, 'run.sh'],
      [`${'ray start '.repeat(n)}`, 'run.sh'],
      [`${'echo '.repeat(n)}pip install einops`, 'run.sh'],
      [`pip install ${'"a '.repeat(n)}`, 'Dockerfile'],
      [`pip install ${'-r '.repeat(n)}`, 'Dockerfile'],
      [`${'sim_device '.repeat(n)}: cpu`, 'task.yaml'],
      [`${'--rl-device-'.repeat(n)} cpu`, 'run.sh'],
      [`${'attn_implementation '.repeat(n)}= sdpa`, 'train.sh'],
      [`${'torch==2.1 '.repeat(n)}`, 'run.sh'],
      [`ENV ${'BUILD_CUDA_EXT'.repeat(n)}`, 'Dockerfile'],
      [`image: ${'nvcr'.repeat(n)}`, 'ci.yml'],
      [`RUN ${'pip install \\\n'.repeat(n / 10)}`, 'Dockerfile'],
      [`RUN ${'pip install einops; '.repeat(n / 10)}`, 'Dockerfile'],
    ] as const)
      expect(scan(src, rel)).toEqual([]);
  });

  it('a CUDA tensor type handed to the code by a Makefile or a config is flagged where it is named', () => {
    const make = 'test-cuda:\n\tCUDA_TEST=1 PYRO_TENSOR_TYPE=torch.cuda.DoubleTensor pytest -vx\n';
    expect(scan(make, 'Makefile').filter((f) => f.ruleId === 'script.cuda-env')).toEqual([
      { ruleId: 'script.cuda-env', line: 2, column: 31 },
    ]);
    expect(scan('default_tensor_type: torch.cuda.HalfTensor\n', 'conf.yaml')).toHaveLength(1);
    // a CPU type, or the word alone in prose, is not
    expect(scan('PYRO_TENSOR_TYPE=torch.DoubleTensor pytest\n', 'Makefile')).toEqual([]);
  });

  it("a launcher with something to port, or a distributed one, is told to source CANN's set_env.sh, once, where it goes", () => {
    const cann = (src: string, rel = 'run.sh') =>
      scan(src, rel).filter((f) => f.ruleId === 'script.cann-env');
    const launcher = 'export CUDA_VISIBLE_DEVICES=0,1\ntorchrun --nproc_per_node 2 train.py\n';
    // below the shebang and a `set -x`, above a `set -u` (set_env.sh reads unset variables)
    expect(cann(`#!/bin/bash\n# train\nset -x\n${launcher}`)).toEqual([
      { ruleId: 'script.cann-env', line: 3, column: 1 },
    ]);
    expect(cann(`#!/bin/bash\nset -euo pipefail\n${launcher}`)).toEqual([
      { ruleId: 'script.cann-env', line: 2, column: 1 },
    ]);
    const job = '#SBATCH -N 2\nexport NCCL_IB_HCA=mlx5\nsrun --ntasks=16 python -u train.py\n';
    expect(cann(job, 'job.sbatch')).toEqual([{ ruleId: 'script.cann-env', line: 1, column: 1 }]);
    // a distributed launch needs HCCL from CANN's environment even with nothing else to port
    expect(cann('#!/bin/bash\ntorchrun --nproc_per_node 8 train.py\n')).toEqual([
      { ruleId: 'script.cann-env', line: 1, column: 1 },
    ]);
    expect(
      cann('set -x\npython -m torch.distributed.launch --nproc_per_node=4 t.py\n'),
    ).toHaveLength(1);
    // already set up, nothing launched, a `python -c` check, one plain process with nothing
    // else to port: quiet
    expect(cann(`source /usr/local/Ascend/ascend-toolkit/set_env.sh\n${launcher}`)).toEqual([]);
    expect(cann('export CUDA_VISIBLE_DEVICES=0\npip install -r requirements.txt\n')).toEqual([]);
    expect(cann('export CUDA_VISIBLE_DEVICES=0\npython -c "import torch"\n')).toEqual([]);
    expect(cann('#!/bin/bash\npython train.py --epochs 3\n')).toEqual([]);
    expect(cann('# torchrun is documented in README.md\npython train.py\n')).toEqual([]);
    // a line of flags without a command (a regex backtracked exponentially on 40 of them)
    expect(cann(`export CUDA_VISIBLE_DEVICES=0\nsrun ${'-a '.repeat(100_000)}x\n`)).toEqual([]);
    expect(
      cann(`export CUDA_VISIBLE_DEVICES=0\n${'A=1 '.repeat(100)}/usr/bin/python3 -u t.py\n`),
    ).toHaveLength(1);
    // a command kept in a variable counts, a variable naming the interpreter alone does not
    expect(
      cann('export NCCL_DEBUG=WARN\nLAUNCH="python -m torch.distributed.launch"\n$LAUNCH t.py\n'),
    ).toHaveLength(1);
    expect(cann('export NCCL_DEBUG=WARN\npython=python3  # the interpreter\n')).toEqual([]);
    // a config is not a launcher
    expect(cann('CUDA_VISIBLE_DEVICES: "0"\ncommand: python train.py\n', 'job.yaml')).toEqual([]);
  });

  it('pip install: packages with rules, wherever the command sits on its line', () => {
    expect(scan('cd x && pip3 install -U "flash-attn>=2" einops; echo done\n')).toEqual([
      { ruleId: 'lib.flash-attn', line: 1, column: 26 },
    ]);
    // printed or commented, it installs nothing
    expect(scan('echo "then pip install xformers"\n# pip install xformers\n')).toEqual([]);
    // an extra named for a package installs it, on the project's own path too (a variable and
    // an extra no rule knows, quiet)
    expect(scan('pip install -e .[flash-attn,$EXTRAS,dev] "lm-eval[xformers]"\n')).toEqual([
      { ruleId: 'lib.flash-attn', line: 1, column: 18 },
      { ruleId: 'lib.xformers', line: 1, column: 51 },
    ]);
  });
});
