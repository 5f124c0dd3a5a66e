import { expect } from 'chai';
import { atomHash, phash2 } from '../../src/erlang/phash2.js';
import { atom, binary, float, int, list, tuple, type ErlTerm } from '../../src/erlang/term.js';

// erlang:phash2/1 is documented as portable across machines and ERTS versions; the expected
// values below were printed by erlang:phash2/1 on OTP 25 (erts 13.1.5, the runtime of Debian's
// RabbitMQ 3.10.8). The port follows make_hash2 in erts (erl_term_hashing.c / utils.c).
const a = atom;
const b = (s: string) => binary(s);
const VECTORS: [string, ErlTerm, number][] = [
  ['<<>>', b(''), 13708901],
  ['<<"a">>', b('a'), 112802447],
  ['<<"abc">>', b('abc'), 98228475],
  ['<<"key-1">>', b('key-1'), 5452885],
  ['<<"order.created">>', b('order.created'), 41994547],
  ['12-byte binary (one full block)', b('0123456789ab'), 115360506],
  ['36-byte binary', b('0123456789abcdefghijklmnopqrstuvwxyz'), 91488717],
  ['undefined', a('undefined'), 45914356],
  ['true', a('true'), 506293],
  ['longstr', a('longstr'), 56945346],
  ['0', int(0), 88723725],
  ['1', int(1), 2614250],
  ['-1', int(-1), 44071773],
  ['2^27-1', int(134217727), 112602999],
  ['2^27', int(134217728), 12354923],
  ['-2^27-1', int(-134217729), 76739502],
  ['2^40', int(2n ** 40n), 13893919],
  ['-2^62 (a bignum)', int(-(2n ** 62n)), 82210594],
  ['2^64 (two digits)', int(2n ** 64n), 103122609],
  ['1.5', float(1.5), 10380315],
  ['0.0', float(0), 20875736],
  ['-0.0 hashes as 0.0', float(-0), 20875736],
  ['-2.5e-10', float(-2.5e-10), 72643920],
  ['{}', tuple(), 87486268],
  ['{longstr,<<"abc">>}', tuple(a('longstr'), b('abc')), 101716503],
  ['{signedint,5}', tuple(a('signedint'), int(5)), 40839585],
  ['{long,-70000000000}', tuple(a('long'), int(-70000000000n)), 41683123],
  ['{bool,true}', tuple(a('bool'), a('true')), 32030443],
  ['{decimal,{2,314}}', tuple(a('decimal'), tuple(int(2), int(314))), 113508173],
  ['{double,1.25}', tuple(a('double'), float(1.25)), 77920771],
  ['[]', list([]), 113427502],
  ['[1,2,3] (a byte run)', list([int(1), int(2), int(3)]), 25788620],
  ['[1,2,3,4,5] (a 4-byte word and a rest)', list([1, 2, 3, 4, 5].map(int)), 66056394],
  ['[300,1]', list([int(300), int(1)]), 12314199],
  ['[1,a,2,3]', list([int(1), a('a'), int(2), int(3)]), 73260087],
  ['[{a,1}]', list([tuple(a('a'), int(1))]), 61553337],
  ['[[]]', list([list([])]), 96416884],
];

describe('phash2 (erlang:phash2/1 port)', () => {
  for (const [name, term, expected] of VECTORS) {
    it(`phash2(${name}) = ${expected}`, () => {
      expect(phash2(term)).to.equal(expected);
    });
  }

  it('atom hash is hashpjw over the name, a latin1 character counting once (atom.c atom_hash)', () => {
    expect(atomHash('a')).to.equal(97);
    expect(atomHash('ab')).to.equal(1650);
    expect(atomHash('é')).to.equal(233); // erlang:phash2(list_to_atom([233])) = 233
    expect(phash2(atom('☺'))).to.equal(60474);
  });
});
