import { expect } from 'chai';
import { AMQP_0_9_1_HEADER, checkProtocolHeader, classifyProtocolHeader } from '../../src/frame/protocol-header.js';

describe('protocol header (spec 4.2.2)', () => {
  it('is "AMQP" 0 0 9 1', () => {
    expect([...AMQP_0_9_1_HEADER]).to.deep.equal([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1]);
  });

  it('waits for 8 octets, then accepts only 0-9-1', () => {
    expect(checkProtocolHeader(Buffer.from('AMQP'))).to.equal('incomplete');
    expect(checkProtocolHeader(Buffer.from('GET / HT'))).to.equal('mismatch');
    expect(checkProtocolHeader(Buffer.from('GET'))).to.equal('incomplete');
    expect(checkProtocolHeader(AMQP_0_9_1_HEADER)).to.equal('ok');
    expect(checkProtocolHeader(Buffer.concat([AMQP_0_9_1_HEADER, Buffer.from([1, 0])]))).to.equal('ok');
    expect(checkProtocolHeader(Buffer.from('AMQP\x00\x00\x09\x02', 'latin1'))).to.equal('mismatch');
  });

  it('classifies headers as RabbitMQ 3.10 does', () => {
    const h = (s: string): Buffer => Buffer.from(s, 'latin1');
    expect(classifyProtocolHeader(h('AMQP\x00\x00\x09\x01'))).to.equal('amqp-0-9-1');
    expect(classifyProtocolHeader(h('AMQP\x01\x01\x00\x09'))).to.equal('amqp-0-9');
    expect(classifyProtocolHeader(h('AMQP\x01\x01\x08\x00'))).to.equal('amqp-0-8');
    expect(classifyProtocolHeader(h('AMQP\x03\x01\x00\x00'))).to.equal('amqp-1-0');
    expect(classifyProtocolHeader(h('HTTP/1.1'))).to.equal('other');
    expect(classifyProtocolHeader(h('AMQP'))).to.equal(undefined);
  });
});
