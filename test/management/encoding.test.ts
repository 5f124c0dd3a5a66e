import { expect } from 'chai';
import { jsonToProperties, jsonToTable, propertiesToJson, tableToJson } from '../../src/management/amqp-json.js';
import { argsHash, packBindingProps, quotePlus, relativise, unpackBindingProps } from '../../src/management/binding-key.js';
import { encodeJson, float } from '../../src/management/json.js';
import { asMap, extractColumns } from '../../src/management/query.js';
import { F } from '../../src/frame/field-table.js';

describe('management API: encodings', () => {
  it('computes properties_key as rabbit_mgmt_format:pack_binding_props (hashes recorded from RabbitMQ 3.10.8)', () => {
    expect(packBindingProps('', {})).to.equal('~');
    expect(packBindingProps('order.*', {})).to.equal('order.%2A');
    expect(packBindingProps('a~b c/d', {})).to.equal('a%7Eb+c%2Fd');
    expect(packBindingProps('job.#', jsonToTable({ 'x-foo': 'bar' }))).to.equal('job.%23~EDqv5Q');
    // Keys sorted as RabbitMQ's decoded map folds them; longstr, long, bool, double, array, table.
    expect(packBindingProps('x', jsonToTable({ b: 1, a: 's', c: true, d: 1.5, e: [1, 'a'], f: { g: 1 } }))).to.equal('x~JaLtTA');
    expect(argsHash({ 'x-foo': F.str('bar') })).to.equal('EDqv5Q');
  });

  it('reads a properties_key back (already percent-decoded once by the router), as rabbit_mgmt_wm_binding does', () => {
    expect(unpackBindingProps('~')).to.deep.equal({ routingKey: '' });
    expect(unpackBindingProps('order.%2A')).to.deep.equal({ routingKey: 'order.*' });
    expect(unpackBindingProps('job.%23~EDqv5Q')).to.deep.equal({ routingKey: 'job.#', hash: 'EDqv5Q' });
    expect(unpackBindingProps('a%7Eb+c%2Fd')).to.deep.equal({ routingKey: 'a~b c/d' });
    expect(unpackBindingProps('a~b~c')).to.equal('too-many');
    expect(quotePlus('é ~')).to.equal('%C3%A9+~');
  });

  it('makes a created binding\'s Location relative to the POSTed path, as rabbit_web_dispatch_util:relativise', () => {
    expect(relativise('/api/bindings/%2F/e/x/q/q1', '/api/bindings/%2F/e/x/q/q1/order.%252A')).to.equal('q1/order.%252A');
    expect(relativise('/api/bindings/%2f/e/x/q/q1', '/api/bindings/%2F/e/x/q/q1/~')).to.equal('../../../../%2F/e/x/q/q1/~');
  });

  it('writes floats as floats and leaves undefined members out', () => {
    expect(encodeJson({ rate: float(0), avg: float(1.5), n: 0, big: 12345678901234567890n, gone: undefined, s: 'é"' })).to.equal('{"rate":0.0,"avg":1.5,"n":0,"big":12345678901234567890,"s":"é\\""}');
    expect(encodeJson({ rate: float(0), avg: float(1.5), n: 0, gone: undefined, s: 'é"', list: [float(2), null, 'x'] })).to.equal('{"rate":0.0,"avg":1.5,"n":0,"s":"é\\"","list":[2.0,null,"x"]}');
    // A string that looks like a float's placeholder stays a string.
    expect(encodeJson({ s: '\uE000abc:1.0', t: float(3) })).to.equal('{"s":"\uE000abc:1.0","t":3.0}');
    expect(JSON.stringify({ f: float(2.5) }), 'a Float outside encodeJson').to.equal('{"f":2.5}');
  });

  it('converts tables and properties both ways as rabbit_misc:amqp_table and to_basic_properties do', () => {
    expect(encodeJson(tableToJson({ s: F.str('x'), d: F.double(2), t: F.bool(true), b: F.bytes(Buffer.from([0xff])), a: F.array([F.int8(1)]), v: F.void() })))
      .to.equal('{"s":"x","d":2.0,"t":true,"b":"Not UTF-8, base64 is: /w==","a":[1],"v":"undefined"}');
    expect(propertiesToJson({})).to.deep.equal([]);
    expect(Object.keys(propertiesToJson({ contentType: 'a', deliveryMode: 2, appId: 'x' }) as object)).to.deep.equal(['app_id', 'delivery_mode', 'content_type']);
    expect(jsonToProperties({ delivery_mode: 2, headers: { k: 'v' }, unknown: 1 })).to.deep.equal({ deliveryMode: 2, headers: { k: F.str('v') } });
    expect(() => jsonToProperties({ priority: '1' })).to.throw('not_int');
    expect(() => jsonToTable({ k: null })).to.throw('null_not_allowed');
  });

  it('cuts columns as rabbit_mgmt_util:extract_column_items: proplists descended, maps whole, an empty proplist as []', () => {
    const item = { name: 'q', gc: { a: 1, b: 2 }, args: asMap({ x: 1, y: 2 }), list: [{ p: 1, q: 2 }] };
    expect(extractColumns(item, [['name'], ['gc', 'a'], ['args', 'x'], ['list', 'p']])).to.deep.equal({ name: 'q', gc: { a: 1 }, args: { x: 1, y: 2 }, list: [{ p: 1 }] });
    expect(extractColumns(item, [['gc', 'zzz']])).to.deep.equal({ gc: [] });
  });
});
