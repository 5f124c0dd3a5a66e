import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Broker } from './broker.js';
import { checkReadCoalescing, parseInformationUnit, parseOptionalPort, readConfigFile, type BrokerConfig } from './config.js';
import { checkTlsConfig } from './tls/tls-options.js';
import { urlHost } from './peer-address.js';

const USAGE = `Usage: warren [options]
       warren check [--data-dir D] [--repair]   check a stopped broker's data (warren check --help)
       warren export [--data-dir D]             print a stopped broker's definitions (RabbitMQ's format)

Options:
  --port N          port to listen on (default 5672; env WARREN_PORT)
  --host H          address to bind (default 0.0.0.0; env WARREN_HOST)
  --data-dir D      where durable data lives (default ./warren-data; env WARREN_DATA_DIR)
  --log-level L     fatal|error|warn|info|debug|trace|silent (default info; env WARREN_LOG_LEVEL)
  --disk-free-limit N
                    block publishers when the data dir's disk has less free space than N
                    bytes; units as RabbitMQ's disk_free_limit.absolute: 50MB, 1GB, 512MiB
                    (default 50MB; env WARREN_DISK_FREE_LIMIT)
  --memory-high-watermark R
                    block publishers above this share of the memory available (RAM, or the
                    container's limit when lower): RabbitMQ's vm_memory_high_watermark.relative
                    (default 0.4; env WARREN_MEMORY_HIGH_WATERMARK)
  --memory-high-watermark-absolute N
                    the watermark in bytes instead, units as RabbitMQ's
                    vm_memory_high_watermark.absolute: 1GB, 512MiB (env
                    WARREN_MEMORY_HIGH_WATERMARK_ABSOLUTE)
  --config FILE     JSON file with settings such as users and vhosts (env WARREN_CONFIG)
  --definitions FILE
                    RabbitMQ definitions (JSON, as GET /api/definitions exports them) imported
                    at every boot; a blank node then gets no default guest user or / vhost
                    (env WARREN_DEFINITIONS)
  --management-port N
                    port of the management HTTP API (RabbitMQ's), on the same host;
                    0 = any free port, off = no management API (default 15672; env
                    WARREN_MANAGEMENT_PORT)
  --tls-port N      AMQPS port (default 5671 when a certificate is given; env WARREN_TLS_PORT)
  --tls-cert FILE   PEM server certificate: turns on the AMQPS listener (env WARREN_TLS_CERT)
  --tls-key FILE    PEM private key of the certificate (env WARREN_TLS_KEY)
  --tls-ca FILE     PEM CA bundle; with it clients must present a certificate it signed
                    (RabbitMQ's verify_peer + fail_if_no_peer_cert; env WARREN_TLS_CA).
                    The config file's "tls" takes every ssl_options setting. SIGHUP reads
                    the certificate, key and CA files again.
  --prometheus-port N
                    Prometheus metrics (/metrics, /metrics/per-object, /metrics/detailed) on
                    this port, 0 = any free port, off = none (default 15692; env
                    WARREN_PROMETHEUS_PORT)
  --connection-max N         connections open at once, 0 = no limit (default 0;
                             env WARREN_CONNECTION_MAX)
  --connection-max-per-ip N  connections open at once from one address, 0 = no limit
                             (default 0; env WARREN_CONNECTION_MAX_PER_IP)
  --read-coalescing US
                    while a client streams small writes and waits for no reply, the broker
                    waits this many microseconds (once its output is out) before reading
                    again, so it reads more at a time: less CPU per message, at most US more
                    latency for that input; 0 = off (default 50; env WARREN_READ_COALESCING)
  --ready-json      once every listener is up, print one JSON line to stdout with their URLs,
                    {"amqp":"amqp://127.0.0.1:5672","management":"http://127.0.0.1:15672"}
                    (and "amqps", "prometheus" when on), for a harness that spawns the
                    broker; logs then go to stderr
  --fake-clock      for tests: the broker runs on a fake clock that starts at the current
                    time and then moves only through POST /api/warren/clock/advance
                    {"ms":N} on the management port (administrators): TTLs, expiries,
                    delayed messages, heartbeats and alarm checks wait for it (env
                    WARREN_FAKE_CLOCK=1)
  -h, --help        show this help
`;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * The settings from the command line: the broker's, how the command reports (--ready-json),
 * and whether the broker runs on a FakeClock (--fake-clock).
 */
export type CliSettings = Partial<BrokerConfig> & { readyJson?: boolean; fakeClock?: boolean };

/** Parses flags and WARREN_* variables (flags win) — the only place that reads the settings from process.env. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv): CliSettings | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
      'disk-free-limit': { type: 'string' },
      'memory-high-watermark': { type: 'string' },
      'memory-high-watermark-absolute': { type: 'string' },
      config: { type: 'string' },
      definitions: { type: 'string' },
      'connection-max': { type: 'string' },
      'connection-max-per-ip': { type: 'string' },
      'management-port': { type: 'string' },
      'tls-port': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-ca': { type: 'string' },
      'ready-json': { type: 'boolean' },
      'fake-clock': { type: 'boolean' },
      'prometheus-port': { type: 'string' },
      'read-coalescing': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const configFile = values.config ?? env['WARREN_CONFIG'];
  const config: CliSettings = configFile ? readConfigFile(configFile) : {};
  if (values['ready-json']) config.readyJson = true;
  const fakeClock = values['fake-clock'] ? '1' : env['WARREN_FAKE_CLOCK'];
  if (fakeClock !== undefined && fakeClock !== '' && fakeClock !== '0') {
    if (fakeClock !== '1' && fakeClock !== 'true') throw new Error(`invalid WARREN_FAKE_CLOCK '${fakeClock}' (1 or 0)`);
    config.fakeClock = true;
  }
  const port = values.port ?? env['WARREN_PORT'];
  if (port !== undefined) config.port = portNumber(port);
  const managementPort = values['management-port'] ?? env['WARREN_MANAGEMENT_PORT'];
  if (managementPort !== undefined) config.managementPort = parseOptionalPort(managementPort, 'invalid management port');
  const definitions = values.definitions ?? env['WARREN_DEFINITIONS'];
  if (definitions !== undefined) config.definitions = definitions;
  const host = values.host ?? env['WARREN_HOST'];
  if (host !== undefined) config.host = host;
  config.dataDir = values['data-dir'] ?? env['WARREN_DATA_DIR'] ?? config.dataDir ?? './warren-data';
  const connectionMax = values['connection-max'] ?? env['WARREN_CONNECTION_MAX'];
  if (connectionMax !== undefined) config.connectionMax = count('connection-max', connectionMax);
  const perIp = values['connection-max-per-ip'] ?? env['WARREN_CONNECTION_MAX_PER_IP'];
  if (perIp !== undefined) config.connectionMaxPerIp = count('connection-max-per-ip', perIp);
  const tlsCert = values['tls-cert'] ?? env['WARREN_TLS_CERT'];
  const tlsKey = values['tls-key'] ?? env['WARREN_TLS_KEY'];
  const tlsCa = values['tls-ca'] ?? env['WARREN_TLS_CA'];
  const tlsPort = values['tls-port'] ?? env['WARREN_TLS_PORT'];
  if (tlsCert !== undefined || tlsKey !== undefined || tlsCa !== undefined || tlsPort !== undefined) {
    const tls = { ...config.tls } as Partial<NonNullable<BrokerConfig['tls']>>;
    if (tlsCert !== undefined) tls.certfile = tlsCert;
    if (tlsKey !== undefined) tls.keyfile = tlsKey;
    if (tlsCa !== undefined) Object.assign(tls, { cacertfile: tlsCa, verify: 'verify_peer', fail_if_no_peer_cert: true });
    if (tlsPort !== undefined) tls.port = portNumber(tlsPort);
    if (tls.certfile === undefined || tls.keyfile === undefined) throw new Error('TLS needs both --tls-cert and --tls-key');
    config.tls = tls as NonNullable<BrokerConfig['tls']>;
    checkTlsConfig(config.tls, 'TLS settings');
  }
  const prometheusPort = values['prometheus-port'] ?? env['WARREN_PROMETHEUS_PORT'];
  if (prometheusPort !== undefined) config.prometheusPort = parseOptionalPort(prometheusPort, 'invalid Prometheus port');
  const level = values['log-level'] ?? env['WARREN_LOG_LEVEL'];
  if (level !== undefined) {
    if (!LOG_LEVELS.includes(level)) throw new Error(`invalid log level '${level}' (one of ${LOG_LEVELS.join(', ')})`);
    config.logLevel = level as BrokerConfig['logLevel'];
  }
  const diskFreeLimit = values['disk-free-limit'] ?? env['WARREN_DISK_FREE_LIMIT'];
  if (diskFreeLimit !== undefined) config.diskFreeLimit = parseInformationUnit(diskFreeLimit, 'invalid disk free limit');
  const relative = values['memory-high-watermark'] ?? env['WARREN_MEMORY_HIGH_WATERMARK'];
  if (relative !== undefined) {
    const n = Number(relative);
    if (relative.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`invalid memory high watermark '${relative}' (a share of memory such as 0.4)`);
    config.memoryHighWatermark = n;
    // A flag wins over the config file, whichever form the file used.
    delete config.memoryHighWatermarkAbsolute;
  }
  const absolute = values['memory-high-watermark-absolute'] ?? env['WARREN_MEMORY_HIGH_WATERMARK_ABSOLUTE'];
  if (absolute !== undefined) config.memoryHighWatermarkAbsolute = parseInformationUnit(absolute, 'invalid absolute memory high watermark');
  const coalescing = values['read-coalescing'] ?? env['WARREN_READ_COALESCING'];
  if (coalescing !== undefined) {
    const micros = coalescing.trim() === '' ? NaN : Number(coalescing);
    // What was typed, in the error, when it is not a number at all.
    config.readCoalescingMicros = checkReadCoalescing(Number.isNaN(micros) ? coalescing : micros, 'invalid read coalescing');
  }
  return config;
}

/** A management port: 0..65535, or 'off'. */
function portNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`invalid port '${value}'`);
  return n;
}

function count(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0) throw new Error(`invalid ${flag} '${value}' (a whole number, 0 = no limit)`);
  return n;
}

/**
 * Runs the `warren` command: a subcommand, --help, or the broker. Resolves with the broker once
 * it listens (bin/broker.cjs then writes its code cache), undefined when no broker was started.
 */
export async function main(argv = process.argv.slice(2)): Promise<Broker | undefined> {
  // The subcommands' modules are loaded when used: the launcher imports this module too, and
  // `warren check` alone needs LMDB (50 ms to load) before the broker starts.
  if (argv[0] === 'check') {
    const { checkCommand } = await import('./store/lmdb/check-command.js');
    process.exitCode = await checkCommand(argv.slice(1), process.env, process.stdout);
    return;
  }
  if (argv[0] === 'export') {
    const { exportCommand } = await import('./management/definitions/export-command.js');
    process.exitCode = await exportCommand(argv.slice(1), process.env, process.stdout, process.stderr);
    return;
  }
  let config: CliSettings | 'help';
  try {
    config = parseCli(argv, process.env);
  } catch (err) {
    process.stderr.write(`warren: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (config === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const { readyJson, fakeClock, ...settings } = config;
  let broker: Broker;
  try {
    // Loaded here, not at the top: the launcher (launcher.ts) parses the flags with this module
    // and starts another Node; it has no use for the broker's modules.
    const [{ Broker }, { createLogger, prettyDestination }, { FakeClock }] = await Promise.all([
      import('./broker.js'), import('./log.js'), import('./clock.js'),
    ]);
    // People at a terminal get readable lines; pipes and files get pino's JSON lines. With
    // --ready-json, stdout carries the ready line only and logs go to stderr.
    const out = readyJson ? process.stderr : process.stdout;
    const level = settings.logLevel ?? 'info';
    const logger = out.isTTY ? createLogger(level, prettyDestination(out)) : createLogger(level, out);
    // --fake-clock: time starts now and moves only by POST /api/warren/clock/advance.
    broker = new Broker({ ...settings, logger, clock: fakeClock ? new FakeClock(Date.now()) : undefined });
  } catch (err) {
    cannotStart(err);
  }
  // Signals are handled from here on: a SIGTERM while the broker starts listening stops it too.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    broker.log.info({ signal }, 'received signal, closing connections');
    broker.close().then(
      () => process.exit(0),
      (err) => {
        broker.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // SIGHUP: take up renewed TLS certificates (connections already open keep theirs).
  process.on('SIGHUP', () => {
    if (!broker.config.tls && !broker.config.managementTls) return;
    try {
      broker.reloadTls();
    } catch (err) {
      broker.log.error({ err: (err as Error).message }, 'TLS certificate reload failed; the old certificate stays in use');
    }
  });
  if (process.channel) {
    // Started by the launcher, which forwards signals: should it go away, so does the broker.
    process.channel.unref();
    process.on('disconnect', () => stop('launcher exited'));
  }
  process.on('unhandledRejection', (reason) => {
    // lmdb-js rejects an internal promise of its own when a commit fails (disk full); the store
    // has already reported that failure, nacked the confirms and blocked publishers.
    if (reason instanceof Error && 'commitError' in reason) {
      broker.log.debug({ err: reason.message }, 'LMDB commit failure (already reported by the store)');
      return;
    }
    broker.log.fatal({ err: reason }, 'unhandled promise rejection');
    process.exit(1);
  });
  let port: number;
  try {
    port = await broker.listen();
  } catch (err) {
    cannotStart(err);
  }
  if (readyJson) process.stdout.write(`${JSON.stringify(readyLine(broker, port))}\n`);
  return broker;
}

/**
 * What --ready-json prints once every listener is up: the URL of each — "amqp", "amqps" (with
 * TLS), "management" and "prometheus" (when on) — with no credentials (clients default to
 * guest/guest and the vhost '/'). A wildcard bind address is given as loopback.
 */
export function readyLine(
  broker: Pick<Broker, 'config' | 'tlsPort'> & Partial<Pick<Broker, 'managementUrl' | 'prometheusUrl'>>, port: number,
): Record<string, string> {
  const host = urlHost(broker.config.host);
  const line: Record<string, string> = { amqp: `amqp://${host}:${port}` };
  if (broker.tlsPort !== undefined) line['amqps'] = `amqps://${host}:${broker.tlsPort}`;
  if (broker.managementUrl !== undefined) line['management'] = `http://${host}:${new URL(broker.managementUrl).port}`;
  if (broker.prometheusUrl !== undefined) line['prometheus'] = `http://${host}:${new URL(broker.prometheusUrl).port}`;
  return line;
}


function cannotStart(err: unknown): never {
  process.stderr.write(`warren: cannot start: ${(err as Error).message}\n`);
  process.exit(1);
}

/** Run when executed directly (node dist/main.js, tsx src/main.ts); bin/warren.js and bin/broker.cjs call main() themselves. */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

if (isEntryPoint()) void main();
