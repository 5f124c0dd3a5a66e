/**
 * `warren export [--data-dir D]`: prints the definitions of a stopped broker's data directory
 * (users with their password hashes, vhosts, permissions, topic permissions, parameters —
 * shovels, vhost limits, operator policies —, global parameters, policies, queues, exchanges,
 * bindings) as RabbitMQ's definitions JSON, the same document GET /api/definitions gives, ready
 * for `rabbitmqctl import_definitions` or POST /api/definitions on a RabbitMQ node.
 *
 * The data directory is opened as the broker opens it (without listening, its shovels not
 * started) and closed again. A directory without a store is refused, and so is one whose broker
 * is running or did not stop cleanly (no clean-shutdown marker): stop it first, or start and
 * stop it once.
 *
 * Exit code: 0 printed; 2 could not export.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

export const EXPORT_USAGE = `Usage: warren export [--data-dir D]

Prints the definitions of a stopped broker's data dir (users with password hashes, vhosts,
permissions, parameters, policies, queues, exchanges, bindings) in RabbitMQ's definitions
format, to import into RabbitMQ (rabbitmqctl import_definitions FILE, or POST /api/definitions).

Options:
  --data-dir D      the broker's data dir (default ./warren-data; env WARREN_DATA_DIR)
  -h, --help        show this help
`;

export async function exportCommand(argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  let values: { 'data-dir'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (e) {
    err.write(`warren export: ${(e as Error).message}\n\n${EXPORT_USAGE}`);
    return 2;
  }
  if (values.help) {
    out.write(EXPORT_USAGE);
    return 0;
  }
  const dataDir = path.resolve(values['data-dir'] ?? env['WARREN_DATA_DIR'] ?? './warren-data');
  if (!existsSync(path.join(dataDir, 'store'))) {
    err.write(`warren export: no Warren data in ${dataDir} (no store directory)\n`);
    return 2;
  }
  if (!existsSync(path.join(dataDir, 'clean-shutdown'))) {
    err.write(`warren export: the broker of ${dataDir} is running or did not stop cleanly; stop it (or start and stop it once) first\n`);
    return 2;
  }
  const [{ Broker }, { exportDefinitions }] = await Promise.all([import('../../broker.js'), import('./broker-definitions.js')]);
  let broker;
  try {
    broker = new Broker({ dataDir, logLevel: 'silent', managementPort: 'off', prometheusPort: 'off' });
  } catch (e) {
    err.write(`warren export: cannot open ${dataDir}: ${(e as Error).message}\n`);
    return 2;
  }
  try {
    out.write(`${JSON.stringify(exportDefinitions(broker))}\n`);
  } finally {
    await broker.close();
  }
  return 0;
}
