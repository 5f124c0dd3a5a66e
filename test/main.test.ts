import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Broker, startBroker } from '../src/broker.js';
import { DEFAULT_CONFIG } from '../src/config.js';
import { parseCli } from '../src/main.js';
import { makeTmpDir, removeDir } from './support/tmp-dir.js';

describe('command line (src/main.ts)', () => {
  it('--connection-max and --connection-max-per-ip, or WARREN_CONNECTION_MAX(_PER_IP); flags win', () => {
    expect(parseCli(['--connection-max', '500', '--connection-max-per-ip', '20'], {})).to.include({ connectionMax: 500, connectionMaxPerIp: 20 });
    expect(parseCli([], { WARREN_CONNECTION_MAX: '7', WARREN_CONNECTION_MAX_PER_IP: '0' })).to.include({ connectionMax: 7, connectionMaxPerIp: 0 });
    expect(parseCli(['--connection-max', '9'], { WARREN_CONNECTION_MAX: '7' })).to.include({ connectionMax: 9 });
    const defaults = parseCli([], {}) as Record<string, unknown>;
    expect(defaults).not.to.have.property('connectionMax');
    expect(defaults).not.to.have.property('connectionMaxPerIp');
  });

  it('refuses a limit that is not a whole number', () => {
    for (const bad of ['-1', '1.5', 'many', '']) {
      expect(() => parseCli([`--connection-max=${bad}`], {}), bad).to.throw("invalid connection-max");
      expect(() => parseCli([], { WARREN_CONNECTION_MAX_PER_IP: bad }), bad).to.throw('invalid connection-max-per-ip');
    }
  });

  it('--tls-cert, --tls-key, --tls-ca and --tls-port (or WARREN_TLS_*) turn on the AMQPS listener', () => {
    expect(parseCli(['--tls-cert', 'c.pem', '--tls-key', 'k.pem'], {})).to.deep.include({ tls: { certfile: 'c.pem', keyfile: 'k.pem' } });
    expect(parseCli(['--tls-ca', 'ca.pem', '--tls-port', '5999'], { WARREN_TLS_CERT: 'c.pem', WARREN_TLS_KEY: 'k.pem' })).to.deep.include({
      tls: { certfile: 'c.pem', keyfile: 'k.pem', cacertfile: 'ca.pem', verify: 'verify_peer', fail_if_no_peer_cert: true, port: 5999 },
    });
    expect(parseCli([], {})).not.to.have.property('tls');
    expect(() => parseCli(['--tls-cert', 'c.pem'], {})).to.throw('TLS needs both --tls-cert and --tls-key');
    expect(() => parseCli(['--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--tls-port', '70000'], {})).to.throw("invalid port '70000'");
  });

  it('--prometheus-port (or WARREN_PROMETHEUS_PORT, or prometheusPort in the config file): 15692 by default, 0 = any, off = none', () => {
    expect(parseCli([], {})).not.to.have.property('prometheusPort'); // the default, 15692
    expect(parseCli(['--prometheus-port', '0'], {})).to.include({ prometheusPort: 0 });
    expect(parseCli(['--prometheus-port=off'], {})).to.include({ prometheusPort: 'off' });
    expect(parseCli([], { WARREN_PROMETHEUS_PORT: '9419' })).to.include({ prometheusPort: 9419 });
    expect(parseCli(['--prometheus-port', '9420'], { WARREN_PROMETHEUS_PORT: '9419' })).to.include({ prometheusPort: 9420 });
    const dir = makeTmpDir('warren-cli-');
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ prometheusPort: 'off' }));
      expect(parseCli(['--config', file], {})).to.include({ prometheusPort: 'off' });
      writeFileSync(file, JSON.stringify({ prometheusPort: 15693 }));
      expect(parseCli(['--config', file], {})).to.include({ prometheusPort: 15693 });
      expect(parseCli(['--config', file, '--prometheus-port', 'off'], {})).to.include({ prometheusPort: 'off' });
      writeFileSync(file, JSON.stringify({ prometheusPort: 'nope' }));
      expect(() => parseCli(['--config', file], {})).to.throw(`config file ${file}: prometheusPort: 'nope' is not a port (0..65535) or "off"`);
    } finally {
      removeDir(dir);
    }
    for (const bad of ['-1', '65536', '1.5', 'on', '']) {
      expect(() => parseCli([`--prometheus-port=${bad}`], {}), bad).to.throw('invalid Prometheus port');
    }
  });

  it('deadLetterRetryMs in the config file: 180,000 by default (RabbitMQ\'s dead_letter_worker_publisher_confirm_timeout), a whole number of ms', () => {
    expect(DEFAULT_CONFIG.deadLetterRetryMs).to.equal(180_000);
    const dir = makeTmpDir('warren-cli-');
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ deadLetterRetryMs: 1000 }));
      expect(parseCli(['--config', file], {})).to.include({ deadLetterRetryMs: 1000 });
      for (const bad of [0, 1.5, '1000']) {
        writeFileSync(file, JSON.stringify({ deadLetterRetryMs: bad }));
        expect(() => parseCli(['--config', file], {}), String(bad)).to.throw(`config file ${file}: deadLetterRetryMs: '${bad}' is not a whole number of milliseconds (at least 1)`);
      }
    } finally {
      removeDir(dir);
    }
  });

  it('--read-coalescing US (or WARREN_READ_COALESCING, or readCoalescingMicros in the config file): 50 by default, 0 = off', async () => {
    expect(parseCli([], {})).not.to.have.property('readCoalescingMicros'); // the default, 50
    expect(DEFAULT_CONFIG.readCoalescingMicros).to.equal(50);
    expect(parseCli(['--read-coalescing', '0'], {})).to.include({ readCoalescingMicros: 0 });
    expect(parseCli([], { WARREN_READ_COALESCING: '120' })).to.include({ readCoalescingMicros: 120 });
    expect(parseCli(['--read-coalescing=25'], { WARREN_READ_COALESCING: '120' })).to.include({ readCoalescingMicros: 25 });
    const dir = makeTmpDir('warren-cli-');
    try {
      const file = join(dir, 'config.json');
      writeFileSync(file, JSON.stringify({ readCoalescingMicros: 0 }));
      expect(parseCli(['--config', file], {})).to.include({ readCoalescingMicros: 0 });
      writeFileSync(file, JSON.stringify({ readCoalescingMicros: '50' }));
      expect(() => parseCli(['--config', file], {})).to.throw(`config file ${file}: readCoalescingMicros: '50' is not a number of microseconds from 0 (off) to 100000`);
    } finally {
      removeDir(dir);
    }
    for (const bad of ['-1', '100001', 'fast', '']) {
      expect(() => parseCli([`--read-coalescing=${bad}`], {}), bad).to.throw(`invalid read coalescing: '${bad}' is not a number of microseconds`);
    }
    // A broker made with the defaults naps; an embedded one (startBroker) does not unless asked.
    const made = new Broker({ port: 0, logLevel: 'silent' });
    expect(made.readCoalescing?.micros).to.equal(50);
    await made.close();
    const embedded = await startBroker({ port: 0 });
    expect(embedded.broker.readCoalescing).to.equal(undefined);
    await embedded.close();
    const asked = await startBroker({ port: 0, readCoalescingMicros: 30 });
    expect(asked.broker.readCoalescing?.micros).to.equal(30);
    await asked.close();
    expect(() => new Broker({ readCoalescingMicros: -5 })).to.throw("readCoalescingMicros: '-5' is not a number of microseconds");
  });

  it('--definitions FILE (or WARREN_DEFINITIONS) names the definitions imported at boot', () => {
    expect(parseCli(['--definitions', 'defs.json'], {})).to.include({ definitions: 'defs.json' });
    expect(parseCli([], { WARREN_DEFINITIONS: '/etc/warren/defs.json' })).to.include({ definitions: '/etc/warren/defs.json' });
    expect(parseCli([], {})).not.to.have.property('definitions');
  });
});
