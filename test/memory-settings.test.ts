import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBroker } from '../src/broker.js';
import { memoryWatermark, resolveConfig } from '../src/config.js';
import { parseCli } from '../src/main.js';
import { availableMemory } from '../src/memory-monitor.js';
import { makeTmpDir, removeDir } from './support/tmp-dir.js';

/** RabbitMQ's vm_memory_high_watermark.relative and .absolute as Warren settings. */
describe('memory watermark settings', () => {
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseCli(argv, env) as ReturnType<typeof resolveConfig>;

  it('takes the share of memory from --memory-high-watermark or WARREN_MEMORY_HIGH_WATERMARK', () => {
    expect(parse(['--memory-high-watermark', '0.25']).memoryHighWatermark).to.equal(0.25);
    expect(parse([], { WARREN_MEMORY_HIGH_WATERMARK: '0.6' }).memoryHighWatermark).to.equal(0.6);
    expect(parse(['--memory-high-watermark', '0.25'], { WARREN_MEMORY_HIGH_WATERMARK: '0.6' }).memoryHighWatermark).to.equal(0.25);
    for (const bad of ['', 'x', '-0.1']) expect(() => parse([`--memory-high-watermark=${bad}`])).to.throw(/invalid memory high watermark/);
  });

  it('takes bytes, with RabbitMQ units, from --memory-high-watermark-absolute or its variable', () => {
    expect(parse(['--memory-high-watermark-absolute', '1GB']).memoryHighWatermarkAbsolute).to.equal(1e9);
    expect(parse([], { WARREN_MEMORY_HIGH_WATERMARK_ABSOLUTE: '512MiB' }).memoryHighWatermarkAbsolute).to.equal(512 * 1024 * 1024);
    expect(() => parse(['--memory-high-watermark-absolute', '1 GB'])).to.throw(/invalid absolute memory high watermark/);
    // The absolute watermark wins over the share.
    const config = resolveConfig(parse(['--memory-high-watermark-absolute', '300MB']));
    expect(memoryWatermark(config)).to.deep.equal({ absolute: 3e8 });
    expect(memoryWatermark(resolveConfig({}))).to.equal(0.4);
  });

  it('reads either from the config file; a share given as a flag replaces an absolute one from the file', () => {
    const dir = makeTmpDir('warren-settings-');
    try {
      const file = join(dir, 'warren.json');
      writeFileSync(file, JSON.stringify({ memoryHighWatermarkAbsolute: '2GB' }));
      expect(parse(['--config', file]).memoryHighWatermarkAbsolute).to.equal(2e9);
      const both = resolveConfig(parse(['--config', file, '--memory-high-watermark', '0.5']));
      expect(memoryWatermark(both)).to.equal(0.5);
      writeFileSync(file, JSON.stringify({ memoryHighWatermarkAbsolute: 'lots' }));
      expect(() => parse(['--config', file])).to.throw(/memoryHighWatermarkAbsolute: 'lots' is not a byte count/);
    } finally {
      removeDir(dir);
    }
  });

  it('the broker alarms at the watermark it is given', async () => {
    const relative = await startBroker({ port: 0, logLevel: 'silent', memoryHighWatermark: 0.3 });
    const absolute = await startBroker({ port: 0, logLevel: 'silent', memoryHighWatermark: 0.3, memoryHighWatermarkAbsolute: 777_000_000 });
    try {
      expect(relative.broker.memory.limitBytes).to.equal(Math.floor(availableMemory() * 0.3));
      expect(absolute.broker.memory.limitBytes).to.equal(777_000_000);
    } finally {
      await relative.close();
      await absolute.close();
    }
  });
});
