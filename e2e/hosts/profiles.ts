/**
 * Simulated Ascend hosts for the tests: what /usr/local/Ascend holds, what the stub `npu-smi`
 * prints (a real sample), which /dev/davinci* nodes exist. These are test doubles for hosts only.
 */
export interface HostProfile {
  /** A sample from tests/fixtures/npu-smi, or null: no npu-smi on this host. */
  npuSmi: string | null;
  /** npu-smi fails like this instead (printed on stdout, exit 255). */
  npuSmiFailure?: string;
  cann: string | null;
  driver: string | null;
  firmware: string | null;
  /** Number of /dev/davinciN nodes (plus davinci_manager, devmm_svm, hisi_hdc when > 0). */
  davinci: number;
  /** Version of the torch_npu stand-in to install, or none. */
  torchNpu?: string | null;
  /** Chip name the stand-in reports from torch.npu.get_device_name(). */
  chipName?: string;
  /** Whether ~/.bashrc sources set_env.sh before its interactive-only guard (true) or after it. */
  setEnvForNonInteractive?: boolean;
  /** Ops the stand-in reports as falling back to the CPU, in torch_npu's own words. */
  fallbackOps?: string[];
  /**
   * Functions the stand-in torch_npu perturbs (a test double for an NPU kernel that rounds
   * differently): `gelu` makes torch.nn.functional.gelu (and torch.gelu) return x·(1 + 2^-10).
   */
  perturbOps?: string[];
  /** Device node mode (default 666); 660 root:root makes them unusable for the login user. */
  deviceMode?: string;
  /**
   * A stub `hccn_tool` (a test double: there is no NPU NIC here; tests/support/hccn-tool, the one
   * stub) printing the real samples of ../shared/knowledge/ascend-distributed.md §2. NPU i gets 192.`net`.i.10/24; `down` lists the
   * NPUs whose link is DOWN; `tls` is every NPU's TLS switch.
   */
  hccn?: { net: number; tls: 0 | 1; down?: number[] };
}

export const PROFILES = {
  /** A healthy 8×910B4 training box, npu-smi 25.0.rc1.1, CANN 8.1.RC1. */
  'ascend-910b': {
    npuSmi: 'info-s3.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
    torchNpu: '2.1.0.post12',
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: true,
  },
  /** torch_npu built for CANN 8.1.RC1 on a host with CANN 8.5.0. */
  'torch-npu-mismatch': {
    npuSmi: 'info-s3.txt',
    cann: '8.5.0',
    driver: '25.5.0',
    firmware: '7.8.0.6.201',
    davinci: 8,
    torchNpu: '2.5.1',
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: true,
  },
  /** ~/.bashrc sources set_env.sh only after the interactive guard: ssh commands never get it. */
  'set-env-not-sourced': {
    npuSmi: 'info-s3.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
    torchNpu: '2.1.0.post12',
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: false,
  },
  /** One chip in Alarm and one held by another process; one op falls back to the CPU. */
  'chip-alarm': {
    npuSmi: 'info-alarm.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
    torchNpu: '2.1.0.post12',
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: true,
    fallbackOps: ['aten::nonzero'],
  },
  /** A healthy 910B box whose torch_npu stand-in perturbs GELU (precision-stage test double). */
  'npu-perturbed-gelu': {
    npuSmi: 'info-s3.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
    torchNpu: '2.1.0.post12',
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: true,
    perturbOps: ['gelu'],
  },
  /** Same chips, older stack: for fleet disagreements. */
  'ascend-910b-old': {
    npuSmi: 'info-s6.txt',
    cann: '8.0.0',
    driver: '24.1.0',
    firmware: '7.5.0.3.220',
    davinci: 8,
  },
  /** Atlas 300I Duo: two 310P3 chips on one card, one busy. */
  'ascend-310p-duo': {
    npuSmi: 'info-s11.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 2,
  },
  /** A3: 8 cards, 16 dies. */
  'ascend-a3': {
    npuSmi: 'info-s8.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1',
    firmware: '7.7.0.1.231',
    davinci: 16,
  },
  /** The 910B box with a stub hccn_tool: every link UP, TLS off (distributed stage). */
  'hccn-ok': {
    npuSmi: 'info-s3.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: true,
    hccn: { net: 51, tls: 0 },
  },
  /** Its peer with TLS switched on and NPU 3's link DOWN: two faults HCCL would time out on. */
  'hccn-faults': {
    npuSmi: 'info-s3.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
    chipName: 'Ascend910B4',
    setEnvForNonInteractive: true,
    hccn: { net: 52, tls: 1, down: [3] },
  },
  /** A plain Linux box: no driver, no CANN, no npu-smi. */
  'no-cann': { npuSmi: null, cann: null, driver: null, firmware: null, davinci: 0 },
  /** Driver present but npu-smi cannot initialise (device held by another container). */
  'npu-busy': {
    npuSmi: null,
    npuSmiFailure:
      'DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi module initialize failed. ret is -8005',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
  },
} satisfies Record<string, HostProfile>;

export type ProfileName = keyof typeof PROFILES;
