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
}

export const PROFILES = {
  /** A healthy 8×910B4 training box, npu-smi 25.0.rc1.1, CANN 8.1.RC1. */
  'ascend-910b': {
    npuSmi: 'info-s3.txt',
    cann: '8.1.RC1',
    driver: '25.0.rc1.1',
    firmware: '7.7.0.1.231',
    davinci: 8,
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
