import { Counter, Gauge, Registry } from 'prom-client';
import type { ChipSample, MonitorSample } from '../../../shared/api';
import { HEALTH_STATES } from '../parsers/npu-smi';

/** npu-smi prints memory in MB meaning MiB (its totals are 65536, 32768 …). */
const MIB = 1024 * 1024;

/** What the exporter knows of one host: its newest reading, or why there is none. */
export interface HostReading {
  host: string;
  sample: MonitorSample | null;
  /** The last attempt failed (unreachable, npu-smi missing, the channel dropped): host down. */
  error: string | null;
}

/**
 * The live monitor's readings as Prometheus metrics (prom-client): per host `amw_host_up` and
 * scrape errors; per chip (labels host, npu, chip) AICore utilisation, HBM and DDR used/total,
 * temperature, power and health. A value npu-smi did not print is left out, never written as 0.
 */
export class NpuMetrics {
  readonly registry = new Registry();
  private readonly readings = new Map<string, HostReading>();
  private readonly errors: Counter<'host'>;

  constructor() {
    const r = this.registry;
    const chips = () => [...this.readings.values()].flatMap((h) => chipsOf(h));
    const perChip = (name: string, help: string, value: (c: ChipSample) => number | null): void => {
      new Gauge({
        name,
        help,
        labelNames: ['host', 'npu', 'chip'] as const,
        registers: [r],
        collect() {
          this.reset();
          for (const { host, c } of chips()) {
            const v = value(c);
            if (v !== null && Number.isFinite(v))
              this.set({ host, npu: String(c.npu), chip: String(c.chip) }, v);
          }
        },
      });
    };
    const readings = this.readings;
    new Gauge({
      name: 'amw_host_up',
      help: 'Whether the last npu-smi reading of the host over SSH succeeded (1) or not (0).',
      labelNames: ['host'] as const,
      registers: [r],
      collect() {
        this.reset();
        for (const h of readings.values()) this.set({ host: h.host }, h.error === null ? 1 : 0);
      },
    });
    this.errors = new Counter({
      name: 'amw_scrape_errors_total',
      help: 'Failed npu-smi readings of the host (unreachable, npu-smi missing, the channel dropped).',
      labelNames: ['host'] as const,
      registers: [r],
    });
    new Gauge({
      name: 'amw_host_last_reading_timestamp_seconds',
      help: 'When the newest npu-smi reading of the host arrived (Unix time).',
      labelNames: ['host'] as const,
      registers: [r],
      collect() {
        this.reset();
        for (const h of readings.values())
          if (h.sample) this.set({ host: h.host }, Date.parse(h.sample.at) / 1000);
      },
    });
    perChip(
      'amw_npu_aicore_utilization_ratio',
      'AICore utilisation of the chip, 0 to 1 (npu-smi info, AICore(%)).',
      (c) => (c.aicorePct === null ? null : c.aicorePct / 100),
    );
    perChip('amw_npu_hbm_used_bytes', 'HBM in use on the chip (npu-smi info).', (c) =>
      mib(c.hbmUsedMB),
    );
    perChip('amw_npu_hbm_total_bytes', 'HBM capacity of the chip (npu-smi info).', (c) =>
      mib(c.hbmTotalMB),
    );
    perChip(
      'amw_npu_memory_used_bytes',
      'DDR memory in use on the chip (npu-smi info, Memory-Usage).',
      (c) => mib(c.memUsedMB),
    );
    perChip(
      'amw_npu_memory_total_bytes',
      'DDR memory capacity of the chip (npu-smi info, Memory-Usage).',
      (c) => mib(c.memTotalMB),
    );
    perChip(
      'amw_npu_temperature_celsius',
      'Chip temperature (npu-smi info, Temp(C)).',
      (c) => c.tempC,
    );
    perChip('amw_npu_power_watts', 'Chip power draw (npu-smi info, Power(W)).', (c) => c.powerW);
    new Gauge({
      name: 'amw_npu_health_state',
      help: 'Health of the chip as npu-smi reports it: 1 for the current state, 0 for the others.',
      labelNames: ['host', 'npu', 'chip', 'state'] as const,
      registers: [r],
      collect() {
        this.reset();
        for (const { host, c } of chips()) {
          const now = (HEALTH_STATES as readonly string[]).includes(c.health ?? '')
            ? c.health
            : 'UNKNOWN';
          for (const state of HEALTH_STATES)
            this.set(
              { host, npu: String(c.npu), chip: String(c.chip), state },
              state === now ? 1 : 0,
            );
        }
      },
    });
  }

  /** A host the exporter watches: listed (down, no reading yet) before its first answer. */
  watch(host: string): void {
    if (!this.readings.has(host))
      this.readings.set(host, { host, sample: null, error: 'no reading yet' });
    this.errors.inc({ host }, 0);
  }

  sample(s: MonitorSample): void {
    this.readings.set(s.host, { host: s.host, sample: s, error: null });
  }

  /** A failed reading: the host is down until the next one, and the error counts. */
  failed(host: string, error: string): void {
    // the chips' last values are dropped: a down host's numbers would read as current
    this.readings.set(host, { host, sample: null, error: error || 'failed' });
    this.errors.inc({ host });
  }

  /** A host no longer watched: its series go (its error count stays, as counters do). */
  forget(host: string): void {
    this.readings.delete(host);
  }

  reading(host: string): HostReading | undefined {
    return this.readings.get(host);
  }

  /** The text exposition format (what /metrics answers and the textfile holds). */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}

const mib = (x: number | null) => (x === null ? null : x * MIB);

function chipsOf(h: HostReading): { host: string; c: ChipSample }[] {
  return h.error === null && h.sample ? h.sample.chips.map((c) => ({ host: h.host, c })) : [];
}
