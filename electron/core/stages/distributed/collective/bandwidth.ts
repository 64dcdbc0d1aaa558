/**
 * Bandwidth as nccl-tests and hccl_test define it: algorithm bandwidth = bytes / time; for
 * all_reduce, bus bandwidth = algbw × 2(n−1)/n (each rank sends and receives 2(n−1)/n of the data in
 * a ring), so figures compare across rank counts. GB/s are 1e9 bytes per second, as hccl_test's.
 */
export function algBandwidthGBs(bytes: number, us: number): number {
  return us > 0 ? bytes / us / 1e3 : 0;
}

export function allReduceBusBandwidthGBs(algGBs: number, ranks: number): number {
  return ranks > 1 ? (algGBs * 2 * (ranks - 1)) / ranks : algGBs;
}

export function bandwidthRow(bytes: number, us: number, ranks: number) {
  const alg = algBandwidthGBs(bytes, us);
  return { bytes, us, algBandwidthGBs: alg, busBandwidthGBs: allReduceBusBandwidthGBs(alg, ranks) };
}
