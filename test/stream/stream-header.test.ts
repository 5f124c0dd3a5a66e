/**
 * The stored header of a message without headers, built from the published bytes: byte for byte
 * what encoding its properties with headers {x-stream-offset} gives.
 */
import { expect } from 'chai';
import { F } from '../../src/frame/field-table.js';
import { decodeContentHeader, encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { withOffsetHeader } from '../../src/stream/stream-header.js';

describe('stream header (x-stream-offset added to the published bytes)', () => {
  const cases = [
    {},
    { deliveryMode: 2 },
    { contentType: 'text/plain', deliveryMode: 1, priority: 3, correlationId: 'c', replyTo: 'r', expiration: '60000', messageId: 'm', timestamp: 1_700_000_000, type: 't', userId: 'guest', appId: 'a' },
    { contentType: 'application/json', contentEncoding: 'gzip' },
    { contentEncoding: 'utf8', appId: 'x' },
    { headers: {}, deliveryMode: 2 },
    { contentType: 'a/b', contentEncoding: 'c', headers: {}, messageId: 'm' },
  ];
  for (const props of cases) {
    for (const offset of [0, 1, 255, 65_536, 2 ** 40 + 7]) {
      it(`${JSON.stringify(props)} at offset ${offset}`, () => {
        const published = encodeContentHeaderPayload(60, 11, props as never);
        const expected = encodeContentHeaderPayload(60, 11, { ...props, headers: { 'x-stream-offset': F.int64(offset) } } as never);
        expect(published.length).to.be.below(expected.length);
        const got = withOffsetHeader(published, offset);
        expect(got).to.deep.equal(expected);
        expect(decodeContentHeader(got!).properties.headers!['x-stream-offset']).to.deep.equal(F.int64(offset));
      });
    }
  }

  it('leaves a message with headers to the full re-encoding', () => {
    const published = encodeContentHeaderPayload(60, 1, { headers: { a: F.int64(1) } } as never);
    expect(withOffsetHeader(published, 5)).to.equal(undefined);
  });
});
