import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger, formatLine, prettyDestination } from '../src/log.js';

describe('logs', () => {
  it('print pino JSON lines for people at a terminal: time, level, message, fields', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 0, 1, 12, 3, 4, 567), name: 'warren', conn: 3, msg: 'closing connection: X', code: 406 });
    expect(formatLine(line)).to.equal('12:03:04.567 WARN  closing connection: X  conn=3 code=406');
    expect(formatLine('not json')).to.equal('not json');
  });

  it('a logger writing to the pretty destination emits one readable line per entry', async () => {
    let text = '';
    const sink = new Writable({ write(chunk: Buffer, _e, done) { text += chunk.toString(); done(); } });
    const log = createLogger('info', prettyDestination(sink));
    log.info({ port: 5672 }, 'warren listening');
    log.debug('not shown');
    await new Promise((r) => setImmediate(r));
    expect(text).to.match(/^\d\d:\d\d:\d\d\.\d{3} INFO  warren listening {2}port=5672\n$/);
  });
});
