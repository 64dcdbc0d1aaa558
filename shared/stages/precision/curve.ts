/**
 * The per-layer chart's error axis, shared by the UI chart and the report's inline SVG. Errors
 * are drawn as log10; an error of exactly 0 (fp32 against fp32 on the same kernels: every module)
 * has no logarithm, so it sits on a floor one decade below the smallest axis value and that line is
 * labelled "0" — otherwise a run where everything agrees draws an empty chart.
 */
export interface ErrorAxis {
  /** log10 of each error; the floor for 0; null where there is no error to draw. */
  logs: (number | null)[];
  /** Where 0 is drawn (a whole decade, below every positive error). */
  floor: number;
  /** The top of the axis (a whole decade, at least 10^0). */
  top: number;
  /** The bottom of the axis, half a decade under the floor: bars rise from here, so a 0 shows. */
  bottom: number;
}

/** The smallest decade the axis shows above its floor, so tiny fp32 errors still read as bars. */
const LOWEST = -12;

export function errorAxis(errors: readonly (number | null | undefined)[]): ErrorAxis {
  let lo = LOWEST;
  let hi = 0;
  for (const e of errors)
    if (typeof e === 'number' && e > 0 && Number.isFinite(e)) {
      const l = Math.log10(e);
      if (l < lo) lo = l;
      if (l > hi) hi = l;
    }
  const floor = Math.floor(lo) - 1;
  const top = Math.ceil(hi);
  const logs = errors.map((e) =>
    typeof e !== 'number' || Number.isNaN(e) || e < 0
      ? null
      : e === 0
        ? floor
        : e === Infinity
          ? top
          : Math.log10(e),
  );
  return { logs, floor, top, bottom: floor - 0.5 };
}

/** An axis value's label: "0" on the floor, `1e-6` style decades elsewhere. */
export function errorTick(v: number, floor: number): string {
  return v < floor ? '' : v === floor ? '0' : `1e${Math.round(v)}`;
}

/** The decades labelled on the axis: the floor ("0") and about `n` whole decades up to the top. */
export function errorTicks(axis: ErrorAxis, n = 6): number[] {
  const every = Math.max(1, Math.ceil((axis.top - axis.floor) / n));
  const out: number[] = [];
  // a decade too close above the floor would print over its "0"
  for (let v = axis.top; v - axis.floor >= Math.max(1, every * 0.67); v -= every) out.unshift(v);
  return [axis.floor, ...out];
}
