// The package ships no types: the shape its README documents (prom2json's), for the tests.
declare module 'parse-prometheus-text-format' {
  export interface ParsedMetricFamily {
    name: string;
    help: string;
    type: 'GAUGE' | 'COUNTER' | 'UNTYPED' | 'HISTOGRAM' | 'SUMMARY';
    metrics: { value?: string; labels?: Record<string, string> }[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedMetricFamily[];
}
