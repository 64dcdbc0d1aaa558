import type { Widen } from '../../../i18n/en';

/** Namespace `stage-env`: one group per check (its title, then what it can say). */
export const en = {
  name: 'Environment',
  /** Parts of a sentence joined two at a time: how this language separates clauses, items, lines. */
  join: { clauses: '{{a}}; {{b}}', list: '{{a}}, {{b}}', lines: '{{a}}\n{{b}}' },
  /** Several sentences as one text (the list is joined the language's way). */
  sentences: '{{sentences}}',
  noPython: 'python3 was not found on this host.',
  versionMatrix: {
    title: 'CANN × torch × torch_npu × Python match the official matrix',
    noCann: 'CANN is not installed.',
    noCannFix:
      'Install the CANN toolkit that matches your torch_npu (see the matrix), then source its set_env.sh.',
    noTorchNpu: 'torch_npu is not installed (CANN {{cann}}).',
    noTorchNpuWithTorch: 'torch_npu is not installed (CANN {{cann}}, torch {{torch}}).',
    install: 'pip install torch=={{torch}} torch-npu=={{torchNpu}}  (pairs with CANN {{cann}})',
    noRelease: 'No torch_npu release lists CANN {{cann}}; upgrade CANN to one in the matrix.',
    torchMismatch:
      'torch {{torch}} does not match torch_npu {{torchNpu}} (it needs torch {{needs}}).',
    unknownTorchNpu: 'torch_npu {{torchNpu}} is not in the official matrix.',
    cannMismatch:
      'torch_npu {{torchNpu}} is not built for CANN {{cann}} (it pairs with CANN {{pairs}}).',
    python: 'Python {{python}} is not supported by torch {{torch}} (supported: {{supported}}).',
    order:
      'Fix them in this order: PyTorch, then the torch_npu wheel built for it, then the CANN it pairs with; rolling back CANN and the driver is the costly step.',
    nearest: 'Nearest valid combinations: {{combos}}. {{order}}',
    crossVersion:
      'torch_npu {{torchNpu}} with CANN {{cann}} is a documented cross-version pairing, not the one it was released with.',
    official:
      'torch_npu {{torchNpu}}, torch {{torch}}, CANN {{cann}}, Python {{python}}: an official combination.',
  },
  driverCann: {
    title: 'Driver and firmware fit the CANN version',
    noDriver: 'No NPU driver found (/usr/local/Ascend/driver/version.info).',
    noDriverFix: 'Install the Ascend HDK (driver and firmware) for your card, then reboot.',
    noCann: 'No CANN to compare the driver with.',
    noTable: 'The knowledge base has no driver table for CANN {{cann}}.',
    listed: 'Driver {{driver}} is listed for CANN {{cann}}.',
    unlisted: 'Driver {{driver}} is not among those listed for CANN {{cann}} ({{listed}}).',
    unlistedFix:
      'Upgrade the driver and firmware (Ascend HDK) to {{wanted}}, or use a CANN that lists {{driver}}.',
  },
  setEnv: {
    title: 'set_env.sh is sourced for non-interactive shells',
    noCann: 'No CANN installed.',
    noScript: 'CANN is installed but its set_env.sh was not found.',
    noScriptFix: 'Reinstall the toolkit, or point ASCEND_TOOLKIT_HOME at it.',
    broken: 'After sourcing {{script}}: {{problems}}.',
    unset: '{{name}} unset',
    ldNoLib64: 'LD_LIBRARY_PATH lacks the toolkit lib64 path',
    ldNoDriver: 'LD_LIBRARY_PATH lacks the driver path',
    brokenFix: 'Check the toolkit installation; set_env.sh should export these.',
    interactiveOnly:
      'set_env.sh is sourced in a login script, but only for interactive shells: ssh commands, schedulers and CI jobs do not get it.',
    notSourced: 'Non-interactive shells (ssh commands, schedulers, CI) do not source set_env.sh.',
    addLine:
      'Add this line at the top of ~/.bashrc, before the "interactive only" guard:\n{{line}}',
    sourced: 'Non-interactive shells already have the toolkit environment ({{home}}).',
  },
  deviceNodes: {
    title: 'NPU device nodes exist and the login user can use them',
    noDriver: 'No NPU driver on this host.',
    missing: 'Missing: {{nodes}}.',
    missingFix:
      'Load the driver (reinstall the HDK or reboot); in a container, pass these devices with --device.',
    denied: 'The login user cannot open {{nodes}}.',
    deniedFix:
      'Add the user to the driver group and log in again: sudo usermod -aG HwHiAiUser $USER',
    usable_one: '{{count}} chip node and the management nodes are usable.',
    usable_other: '{{count}} chip nodes and the management nodes are usable.',
  },
  npuHealth: {
    title: 'Every chip is healthy and free',
    noSmi: 'npu-smi is not on this host.',
    smiFailed: 'npu-smi failed: {{message}}',
    smiFailedMeaning: 'npu-smi failed: {{message}} ({{meaning}})',
    smiFailedFix:
      'Free the device (other containers or processes), run privileged in a container, or reboot after a firmware upgrade.',
    chips: '{{chips}}.',
    busy: 'In use: {{busy}}.',
    chipsBusy: '{{chips}}; in use: {{busy}}.',
    /** A chip npu-smi gives no health for. */
    unknown: '{{chip}} unknown',
    alarmFix:
      'Read the alarm with `npu-smi info -t health -i ID`; fix or exclude the chip (ASCEND_RT_VISIBLE_DEVICES) before training.',
    busyFix:
      'Stop the processes that hold the chips, or pick free chips with ASCEND_RT_VISIBLE_DEVICES.',
    ok_one: '{{count}} chip, OK, not in use.',
    ok_other: '{{count}} chips, all OK, none in use.',
  },
  visibleDevices: {
    title: 'ASCEND_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES match the chips present',
    unset: 'Not set: every chip is visible.',
    notNumbers: '{{name}}={{value}}: not a list of numbers',
    beyond_one: '{{name}}={{value}}: only {{count}} chip is visible',
    beyond_other: '{{name}}={{value}}: only {{count}} chips are visible',
    noNode: '{{name}}={{value}}: no /dev/davinci{{id}}',
    fix: 'Use logic ids of chips that exist (see npu-smi info), or unset the variable.',
    fits_one: '{{vars}} fits the {{count}} chip present.',
    fits_other: '{{vars}} fits the {{count}} chips present.',
  },
  torchNpuImport: {
    title: 'import torch; import torch_npu works and sees the NPUs',
    noPythonFix: 'Install Python 3 supported by your torch (see the matrix).',
    timeout: 'The import did not finish within {{seconds}} s.',
    noResult: 'The import check printed no result (exit {{rc}}).',
    failed: '{{error}}',
    failedCause: '{{error}} — {{cause}}',
    notAvailable: 'torch_npu imports, but torch.npu.is_available() is False.',
    notAvailableFix:
      'Check the device nodes and driver (env.device-nodes), and ASCEND_RT_VISIBLE_DEVICES.',
    ok: 'torch {{torch}}, torch_npu {{torchNpu}}: {{chips}} × {{name}}.',
  },
  npuOpRuns: {
    title: 'A small computation really runs on the NPU',
    timeout: 'The computation did not finish within {{seconds}} s.',
    skipped: 'Skipped: torch_npu does not import (see env.torch-npu-import).',
    failed: 'The computation failed: {{error}}',
    failedCause: 'The computation failed: {{error}} — {{cause}}',
    failedExit: 'The computation failed: exit {{rc}}',
    failedExitCause: 'The computation failed: exit {{rc}} — {{cause}}',
    wrong: 'Wrong result: softmax rows summed to {{value}} instead of 128.',
    notOnNpu:
      'The result is right, but it was computed on {{device}}, not on an NPU: `.npu()` left the tensor where it was.',
    notOnNpuFix:
      'Check that torch_npu is the build for this torch and CANN (env.version-matrix) and that nothing replaces `Tensor.npu` (a stub or an older shim); `python3 -c "import torch, torch_npu; print(torch.randn(2).npu().device)"` must print npu:0.',
    fallback_one: 'It ran, but this op fell back to the CPU: {{ops}}.',
    fallback_other: 'It ran, but these ops fell back to the CPU: {{ops}}.',
    fallbackFix:
      'CPU fallback is slow: a newer torch_npu may have NPU kernels for them (see the ops stage).',
    ok: 'matmul + softmax + nonzero ran on {{device}} in {{seconds}} s, result correct.',
  },
  pythonPackages: {
    title: 'No CUDA-only Python packages in the way',
    /** `problem` and `fix` are the package's texts from knowledge (python-packages.json). */
    found: '{{dist}} {{version}}: {{problem}}',
    fix: '{{dist}}: {{fix}}',
    none_one: 'None of the known troublemakers among {{count}} installed package.',
    none_other: 'None of the known troublemakers among {{count}} installed packages.',
  },
  limits: {
    title: 'Open files, locked memory, disk and memory are enough for training',
    nofile: 'open files limit {{value}} < {{min}}',
    memlock: 'locked-memory limit {{kb}} KB (HCCL wants unlimited)',
    disk: 'only {{gb}} GB free in {{mount}}',
    memory: '{{gb}} GB of memory (data loaders and checkpoints like more)',
    issues: '{{issues}}.',
    ok: 'Limits, disk and memory look fine.',
    fix: 'Raise limits in /etc/security/limits.conf (nofile {{nofile}}+, memlock unlimited: multi-card HCCL fails to register memory with a small ulimit -l) and free disk space.',
  },
  run: 'Run environment checks',
  noHosts: 'This session has no hosts yet: add one with “Hosts…” at the top of the session.',
} as const;

export type EnvMessages = Widen<typeof en>;
