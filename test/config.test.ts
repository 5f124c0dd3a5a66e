import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG, parseInformationUnit, readConfigFile } from '../src/config.js';
import { parseCli } from '../src/main.js';
import { makeTmpDir, removeDir } from './support/tmp-dir.js';

/** Settings that mirror RabbitMQ's: disk_free_limit.absolute (default 50000000 in RabbitMQ 3.10's rabbit.app). */
describe('config: disk free limit', () => {
  it('defaults to RabbitMQ 3.10\'s 50000000 bytes', () => {
    expect(DEFAULT_CONFIG.diskFreeLimit).to.equal(50_000_000);
  });

  it('reads byte counts with RabbitMQ\'s information units (rabbit_resource_monitor_misc)', () => {
    expect(parseInformationUnit(123, 'x')).to.equal(123);
    expect(parseInformationUnit('123', 'x')).to.equal(123);
    expect(parseInformationUnit('50MB', 'x')).to.equal(50_000_000);
    expect(parseInformationUnit('2GB', 'x')).to.equal(2_000_000_000);
    expect(parseInformationUnit('500kB', 'x')).to.equal(500_000);
    expect(parseInformationUnit('1k', 'x')).to.equal(1024);
    expect(parseInformationUnit('512MiB', 'x')).to.equal(512 * 2 ** 20);
    expect(parseInformationUnit('1G', 'x')).to.equal(2 ** 30);
    for (const bad of ['50 MB', '-1', '1.5GB', 'lots', '10TB', '']) {
      expect(() => parseInformationUnit(bad, 'disk free limit'), bad).to.throw(/disk free limit: .* is not a byte count/);
    }
  });

  it('is set by --disk-free-limit, else WARREN_DISK_FREE_LIMIT, else the config file', () => {
    const dir = makeTmpDir('warren-config-');
    try {
      const file = join(dir, 'warren.json');
      writeFileSync(file, JSON.stringify({ diskFreeLimit: '1GB' }));
      expect(readConfigFile(file).diskFreeLimit).to.equal(1e9);
      expect(parseCli(['--config', file], {})).to.include({ diskFreeLimit: 1e9 });
      expect(parseCli(['--config', file], { WARREN_DISK_FREE_LIMIT: '2GB' })).to.include({ diskFreeLimit: 2e9 });
      expect(parseCli(['--disk-free-limit', '3000000', '--config', file], { WARREN_DISK_FREE_LIMIT: '2GB' })).to.include({ diskFreeLimit: 3e6 });
      expect(() => parseCli(['--disk-free-limit', 'plenty'], {})).to.throw(/invalid disk free limit/);
      writeFileSync(file, JSON.stringify({ diskFreeLimit: 'plenty' }));
      expect(() => readConfigFile(file)).to.throw(/diskFreeLimit: 'plenty' is not a byte count/);
    } finally {
      removeDir(dir);
    }
  });
});
