/** Types for parse-prometheus-text-format 1.1 (the package ships none). */
declare module 'parse-prometheus-text-format' {
  export interface ParsedMetric {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface ParsedFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'UNTYPED' | 'SUMMARY' | 'HISTOGRAM';
    metrics: ParsedMetric[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
