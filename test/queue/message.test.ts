import { expect } from 'chai';
import { getHeapStatistics } from 'node:v8';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { collectGarbage } from '../../src/memory-monitor.js';
import { KEEP_TAIL } from '../../src/frame/frame-writer.js';
import { Message, TAILS_KEPT } from '../../src/queue/message.js';

/** A content header of about 128 KiB: thousands of short-string fields (issue 10). */
function bigHeader(): { header: Buffer; fields: number } {
  const headers: FieldTable = {};
  let fields = 0;
  while (encodeContentHeaderPayload(60, 1, { headers }).length < 127 * 1024) {
    for (let i = 0; i < 500; i++, fields++) headers[`h${fields}`] = F.str('v');
  }
  return { header: encodeContentHeaderPayload(60, 1, { headers, deliveryMode: 2, priority: 3 }), fields };
}

function heapUsed(): number {
  collectGarbage();
  return getHeapStatistics().used_heap_size;
}

describe('Message', () => {
  it('keeps what a queue needs as plain fields and does not keep the decoded properties', () => {
    const { header, fields } = bigHeader();
    expect(fields).to.be.greaterThan(10000);
    const queued: Message[] = [];
    const before = heapUsed();
    for (let i = 0; i < 32; i++) {
      const msg = new Message(i, 'x', 'k', Buffer.from(header), Buffer.from('b'));
      // What publishing reads: routing looks at the headers, delivery strips BCC.
      expect(Object.keys(msg.properties.headers ?? {}).length).to.equal(fields);
      expect(msg.withoutBcc()).to.equal(msg);
      queued.push(msg);
    }
    const perMessage = (heapUsed() - before) / queued.length;
    // Decoded, such a header is about 1.8 MiB of JS objects; kept on each of 32 messages that
    // was 57 MiB. Now one decoded header at most is kept (the last one, for the next reader),
    // and a message itself is a few hundred bytes: the header's bytes are off the JS heap.
    expect(perMessage).to.be.lessThan(128 * 1024);
    expect([queued[0]!.persistent, queued[0]!.priority]).to.deep.equal([true, 3]);
  });

  it('keeps frames only when asked, and at most TAILS_KEPT tails at once: the oldest is dropped for a new one', () => {
    const header = encodeContentHeaderPayload(60, 1, {});
    const make = (i: number) => new Message(i, 'x', 'k', header, Buffer.from('b'));
    const plain = make(0);
    expect(plain.wireTail).to.equal(undefined);
    const withTtl = make(1);
    withTtl.ttl = 5000;
    const asked = [withTtl, ...Array.from({ length: TAILS_KEPT + 9 }, (_, i) => make(i + 2))];
    for (const m of asked) {
      m.keepFrames();
      expect(m.wireTail).to.equal(KEEP_TAIL);
    }
    const tails = asked.map((_, i) => Buffer.from(`tail ${i}`));
    asked.forEach((m, i) => m.keepTail(tails[i]));
    // The first ten were dropped: not asked again (what else they hold, a TTL, stays).
    expect(asked.slice(0, 10).map((m) => m.wireTail)).to.deep.equal(Array(10).fill(undefined));
    expect(withTtl.ttl).to.equal(5000);
    expect(asked.slice(10).every((m, i) => m.wireTail === tails[i + 10])).to.equal(true);
    // A tail too long to keep: nothing kept, not asked again.
    const long = make(-1);
    long.keepFrames();
    long.keepTail(undefined);
    expect(long.wireTail).to.equal(undefined);
  });

  it('decodes on demand: the properties of each message, after others were read', () => {
    const props = (n: number) => ({ headers: { n: F.int32(n) }, deliveryMode: n % 2 === 0 ? 2 : 1 });
    const msgs = [0, 1, 2].map((n) => new Message(n, '', 'k', encodeContentHeaderPayload(60, 0, props(n)), Buffer.alloc(0)));
    expect(msgs.map((m) => m.properties.headers?.['n'])).to.deep.equal([F.int32(0), F.int32(1), F.int32(2)]);
    expect(msgs.map((m) => m.persistent)).to.deep.equal([true, false, true]);
    expect(msgs.map((m) => m.priority)).to.deep.equal([undefined, undefined, undefined]);
  });

  it('withoutBcc strips a BCC header, read from the header bytes when asked', () => {
    const headers = { BCC: F.array([F.str('other')]), keep: F.str('yes') };
    const msg = new Message(1, '', 'k', encodeContentHeaderPayload(60, 0, { headers }), Buffer.alloc(0));
    // Another message decoded in between: nothing of msg's is cached on it.
    void new Message(2, '', 'k', encodeContentHeaderPayload(60, 0, {}), Buffer.alloc(0)).properties;
    const delivered = msg.withoutBcc();
    expect(delivered).to.not.equal(msg);
    expect(delivered.properties.headers).to.deep.equal({ keep: F.str('yes') });
    expect(msg.properties.headers?.['BCC']).to.deep.equal(headers.BCC);
  });

  it('holds its body as a range of shared memory, and the flags, priority and TTL exactly', () => {
    const slab = Buffer.from('xxhello worldyy');
    const header = encodeContentHeaderPayload(60, 11, { priority: 255, headers: { BCC: F.array([F.str('b')]) } });
    const msg = new Message(1, 'ex', 'rk', header, slab, undefined, 2, 11);
    expect(msg.body.toString()).to.equal('hello world');
    expect(msg.size).to.equal(11);
    expect([msg.persistent, msg.priority, msg.ttl, msg.bccRoutingKeys]).to.deep.equal([false, 255, undefined, undefined]);
    msg.ttl = 0;
    expect(msg.ttl).to.equal(0);
    // The copy without BCC shares the body's memory, keeps the TTL and lists the BCC keys.
    const delivered = msg.withoutBcc();
    expect(delivered.bodyMemory).to.equal(slab);
    expect([delivered.body.toString(), delivered.ttl, delivered.bccRoutingKeys]).to.deep.equal(['hello world', 0, ['b']]);
    expect(delivered.priority).to.equal(255);
    // A whole buffer is the body itself (no view made).
    const whole = Buffer.from('abc');
    expect(new Message(2, '', 'k', encodeContentHeaderPayload(60, 3, { deliveryMode: 2, priority: 0 }), whole).body).to.equal(whole);
    const persistent = new Message(3, '', 'k', encodeContentHeaderPayload(60, 3, { deliveryMode: 2, priority: 0 }), whole);
    expect([persistent.persistent, persistent.priority]).to.deep.equal([true, 0]);
  });
});
