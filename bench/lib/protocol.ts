/**
 * Messages between the orchestrator (bench/run.ts) and its client worker processes
 * (bench/worker.ts), sent over the Node IPC channel.
 */

/**
 * Which client runs a role: amqplib (bench/worker.ts, what users see) or the load generator
 * (bench/loadgen/worker.ts: pre-encoded frames, batched writes).
 */
export type Engine = 'amqplib' | 'loadgen';

/** A publisher: fixed-size bodies to one exchange, at full speed, paced, or with confirms. */
export interface PublishSpec {
  role: 'publish';
  /** Default amqplib. */
  engine?: Engine;
  /** Load generator only: publisher connections in this process (default 1). */
  connections?: number;
  /** Load generator only: about this many octets per socket write (default 64 KiB). */
  batchBytes?: number;
  /** Load generator only: no handshake, for a TCP sink that only reads. */
  raw?: boolean;
  url: string;
  exchange: string;
  /** One routing key, or 'topic10k' to cycle through keys t.0.e … t.9999.e. */
  routingKey: string;
  size: number;
  persistent: boolean;
  /** Confirm mode with at most this many unconfirmed publishes (0: no confirms). */
  confirmWindow: number;
  /** Messages per second (0: as fast as the socket takes them). */
  rate: number;
  /** Write process.hrtime.bigint() into the first 8 body octets (latency). */
  timestamp: boolean;
  /**
   * Closed loop: stay at most this many messages ahead of what the consumers reported
   * (0: open loop). deliveriesPerMessage converts consumer counts (fanout: 10) to messages.
   */
  aheadLimit: number;
  deliveriesPerMessage: number;
  /** Stop after this many messages (a bound on every run). */
  maxMessages: number;
  /** Publish this many and report 'filled' (queue pre-fill), instead of waiting for marks. */
  fill: number;
  /**
   * Give each message a unique `x-deduplication-header`: offset + its number (the dedup-1m
   * scenario; absent: no headers).
   */
  dedupHeaders?: { offset: number };
  brokerPid: number;
}

/** A consumer on one channel with one consumer per queue. */
export interface ConsumeSpec {
  role: 'consume';
  /** Default amqplib. */
  engine?: Engine;
  url: string;
  queues: string[];
  noAck: boolean;
  /** Acknowledge every N-th delivery with multiple=true (1: ack each). */
  ackEvery: number;
  prefetch: number;
  /** Drain mode: mark by itself at subscription, at 5 % of expect and at expect deliveries, then report. */
  expect: number;
  /** Collect latencies from the body timestamps between the marks. */
  latency: boolean;
  /** Send 'progress' every few ms (closed-loop publishers). */
  progress: boolean;
  brokerPid: number;
  /** basic.consume arguments (x-stream-offset for streams). */
  arguments?: Record<string, unknown>;
}

/** Opens many connections (and then a channel on each) and measures the broker's RSS. */
export interface ConnectionsSpec {
  role: 'connections';
  url: string;
  count: number;
  concurrency: number;
  brokerPid: number;
  /** Milliseconds to let the broker settle before reading its RSS. */
  settleMs: number;
}

export type WorkerSpec = PublishSpec | ConsumeSpec | ConnectionsSpec;

/** What a worker records at a mark. */
export interface Sample {
  /** performance.now() of the worker, ms. */
  t: number;
  /** Messages published / delivered so far. */
  count: number;
  /** process.cpuUsage() user+system of the worker, ms. */
  cpuMs: number;
  /** utime+stime of the broker, ms (NaN if unreadable). */
  brokerCpuMs: number;
  /** Busy CPU time of the whole machine, ms (/proc/stat). */
  systemMs: number;
}

export type ToWorker =
  | { cmd: 'start' }
  | { cmd: 'mark' }
  | { cmd: 'stop' }
  | { cmd: 'credit'; consumed: number };

export type FromWorker =
  | { ev: 'ready' }
  | { ev: 'mark'; sample: Sample }
  | { ev: 'progress'; count: number }
  | { ev: 'filled'; count: number }
  | { ev: 'done'; result: WorkerResult }
  | { ev: 'error'; message: string };

export interface WorkerResult {
  /** Total messages published (publisher) or delivered (consumer). */
  total: number;
  /** Confirms received (confirm publishers). */
  confirmed?: number;
  nacked?: number;
  /** Latency percentiles in ms (latency consumers). */
  latency?: { p50: number; p90: number; p99: number; p999: number; max: number; n: number };
  /** Connections role. */
  connections?: {
    opened: number;
    openMs: number;
    brokerRssBeforeKiB: number;
    brokerRssConnsKiB: number;
    brokerRssChannelsKiB: number;
    brokerCpuMs: number;
    clientCpuMs: number;
    systemMs: number;
  };
  /** Errors the client saw (channel/connection closed by the broker, ...). */
  errors: string[];
}
