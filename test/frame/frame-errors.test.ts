import { expect } from 'chai';
import {
  badFrameEndError,
  cannotDecodeError,
  frameTooLargeError,
  unexpectedFrameError,
  unknownFrameError,
} from '../../src/frame/frame-errors.js';

describe('frame errors: reply texts', () => {
  // The texts below are verbatim what RabbitMQ 3.10.8 sent in connection.close to a raw client.
  it('words the frame errors seen from a real RabbitMQ 3.10.8', () => {
    const method = Buffer.from([0, 60, 0, 10, 0, 0, 0, 0, 0, 10, 0]);
    expect(badFrameEndError(1, method, 0).replyText).to.equal(
      'FRAME_ERROR - type 1, all octets = <<0,60,0,10,0,0,0,0,0,10,0>>: {invalid_frame_end_marker,\n' + ' '.repeat(52) + '0}',
    );
    const long = Buffer.concat([method, Buffer.from('hello world this is long')]);
    expect(badFrameEndError(1, long, 0x41).replyText).to.equal(
      'FRAME_ERROR - type 1, first 16 octets = <<0,60,0,10,0,0,0,0,0,10,0,104,101,108,108,111>>: {invalid_frame_end_marker,\n' +
        ' '.repeat(77) + '65}',
    );
    expect(frameTooLargeError(1, 200000, 131072).replyText).to.equal(
      'FRAME_ERROR - type 1, all octets = <<>>: {frame_too_large,200000,131064}',
    );
    expect(unknownFrameError(5, Buffer.from('abc')).replyText).to.equal('FRAME_ERROR - type 5, all octets = <<"abc">>: unknown_frame');
    expect(unknownFrameError(5, Buffer.from([1, 2, 3])).replyText).to.equal('FRAME_ERROR - type 5, all octets = <<1,2,3>>: unknown_frame');
    expect(unknownFrameError(8, Buffer.from([1])).replyText).to.equal('FRAME_ERROR - type 8, all octets = <<1>>: unknown_frame');
    expect(unknownFrameError(5, Buffer.from([0xc3, 0xa9])).replyText).to.equal('FRAME_ERROR - type 5, all octets = <<"é">>: unknown_frame');
    expect(unexpectedFrameError(8, Buffer.alloc(0)).replyText).to.equal('UNEXPECTED_FRAME - type 8, all octets = <<>>');
    const ack = cannotDecodeError(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 7]), 60, 80);
    expect(ack.replyText).to.equal('FRAME_ERROR - cannot decode <<0,0,0,0,0,0,0,0,0,7>>');
    expect([ack.classId, ack.methodId]).to.deep.equal([60, 80]);
  });
});
