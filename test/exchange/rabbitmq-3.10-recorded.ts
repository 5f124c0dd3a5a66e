/**
 * Routing recorded from a real RabbitMQ 3.10.8 (Debian bookworm's rabbitmq-server, with the
 * rabbitmq_consistent_hash_exchange plugin), driven through amqplib. Header and argument values
 * are written the way amqplib encodes them (see amqplib-values.ts). Regenerate by running the same
 * bindings and publishes against a 3.10 broker; do not edit by hand.
 */
/* eslint-disable */

export const TOPIC_PATTERNS: readonly string[] = ["","#","*","#.#","*.*","a","a.b","a.*","a.#","#.a","*.a","a.#.b","#.a.#","a.*.b","*.#","#.*","#.*.#","a..b",".","..","a.",".a","*.",".*","#.",".#","a.#.#.b","#.#.#.#","*.*.*","a#","*a","a.b.c","#.b","b.#","*.b.#","a.*.#.b","#.#.a","*.#.*","a.#.*","#.#.*.*.#","a.#.a","#.a.#.a.#"];
export const TOPIC_KEYS: readonly string[] = ["",".","..","a","b","a.b","a.b.c","a..b","a.",".a","a.x.b","a.x.y.b","x.a.y","a.a","a.a.a","b.a","*","#","a.*","a.#","a#","*a","x","x.y","x.y.z","a.b.b","b.b","a.b.a.b","...","a...b","a.a.a.a.a","x.a.x.a.x","#.#","*.*","A","a.B"];
/** Binding key → the TOPIC_KEYS it received, sorted. */
export const TOPIC_MATCHES: Readonly<Record<string, readonly string[]>> = {
  "": [""],
  "#": ["","#","#.#","*","*.*","*a",".","..","...",".a","A","a","a#","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b","b.a","b.b","x","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "*": ["#","*","*a","A","a","a#","b","x"],
  "#.#": ["","#","#.#","*","*.*","*a",".","..","...",".a","A","a","a#","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b","b.a","b.b","x","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "*.*": ["#.#","*.*",".",".a","a.","a.#","a.*","a.B","a.a","a.b","b.a","b.b","x.y"],
  "a": ["a"],
  "a.b": ["a.b"],
  "a.*": ["a.","a.#","a.*","a.B","a.a","a.b"],
  "a.#": ["a","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b"],
  "#.a": [".a","a","a.a","a.a.a","a.a.a.a.a","b.a"],
  "*.a": [".a","a.a","b.a"],
  "a.#.b": ["a...b","a..b","a.b","a.b.a.b","a.b.b","a.x.b","a.x.y.b"],
  "#.a.#": [".a","a","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b.a","x.a.x.a.x","x.a.y"],
  "a.*.b": ["a..b","a.b.b","a.x.b"],
  "*.#": ["#","#.#","*","*.*","*a",".","..","...",".a","A","a","a#","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b","b.a","b.b","x","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "#.*": ["#","#.#","*","*.*","*a",".","..","...",".a","A","a","a#","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b","b.a","b.b","x","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "#.*.#": ["#","#.#","*","*.*","*a",".","..","...",".a","A","a","a#","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b","b.a","b.b","x","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "a..b": ["a..b"],
  ".": ["."],
  "..": [".."],
  "a.": ["a."],
  ".a": [".a"],
  "*.": [".","a."],
  ".*": [".",".a"],
  "#.": [".","..","...","a."],
  ".#": [".","..","...",".a"],
  "a.#.#.b": ["a...b","a..b","a.b","a.b.a.b","a.b.b","a.x.b","a.x.y.b"],
  "#.#.#.#": ["","#","#.#","*","*.*","*a",".","..","...",".a","A","a","a#","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b","b.a","b.b","x","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "*.*.*": ["..","a..b","a.a.a","a.b.b","a.b.c","a.x.b","x.a.y","x.y.z"],
  "a#": ["a#"],
  "*a": ["*a"],
  "a.b.c": ["a.b.c"],
  "#.b": ["a...b","a..b","a.b","a.b.a.b","a.b.b","a.x.b","a.x.y.b","b","b.b"],
  "b.#": ["b","b.a","b.b"],
  "*.b.#": ["a.b","a.b.a.b","a.b.b","a.b.c","b.b"],
  "a.*.#.b": ["a...b","a..b","a.b.a.b","a.b.b","a.x.b","a.x.y.b"],
  "#.#.a": [".a","a","a.a","a.a.a","a.a.a.a.a","b.a"],
  "*.#.*": ["#.#","*.*",".","..","...",".a","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b.a","b.b","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "a.#.*": ["a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b"],
  "#.#.*.*.#": ["#.#","*.*",".","..","...",".a","a.","a.#","a.*","a...b","a..b","a.B","a.a","a.a.a","a.a.a.a.a","a.b","a.b.a.b","a.b.b","a.b.c","a.x.b","a.x.y.b","b.a","b.b","x.a.x.a.x","x.a.y","x.y","x.y.z"],
  "a.#.a": ["a.a","a.a.a","a.a.a.a.a"],
  "#.a.#.a.#": ["a.a","a.a.a","a.a.a.a.a","a.b.a.b","x.a.x.a.x"],
};

export const HEADER_BINDINGS: readonly Record<string, unknown>[] = [{},{"x-match":"any"},{"a":1},{"a":1,"x-match":"any"},{"a":"x","b":"y"},{"a":"x","b":"y","x-match":"any"},{"a":null},{"a":null,"b":"y","x-match":"any"},{"x-foo":"bar"},{"x-foo":"bar","x-match":"all-with-x"},{"x-foo":"bar","x-match":"any-with-x"},{"x-foo":"bar","x-match":"any"},{"a":{"!":"long","value":1}},{"a":{"!":"double","value":1}},{"a":Buffer.from("x")},{"a":{}},{"a":{"p":1,"q":2}},{"a":[1]},{"a":true},{"a":{"!":"timestamp","value":5}},{"a":{"!":"decimal","value":{"places":1,"digits":5}}},{"x-match":"all-with-x","a":1},{"a":"x","x-match":"all","b":null},{"a":{"!":"float","value":1.5}},{"a":{"!":"float","value":1.1}},{"a":[]},{"x-match":"any-with-x","x-foo":null,"a":2},{"a":1,"b":1},{"a":1,"b":1,"x-match":"any"},{"a":[[1]]},{"a":{"n":{"m":"x"}}}];
/** Header tables of the published messages (undefined: no headers property). */
export const HEADER_MESSAGES: readonly (Record<string, unknown> | undefined)[] = [undefined,{},{"a":1},{"a":"x"},{"a":"x","b":"y"},{"b":"y"},{"a":null},{"x-foo":"bar"},{"x-foo":"bar","a":1},{"a":{"!":"long","value":1}},{"a":{"!":"double","value":1}},{"a":Buffer.from("x")},{"a":[]},{"a":{}},{"a":{"q":2,"p":1}},{"a":{"p":1,"q":2}},{"a":[{"!":"long","value":1}]},{"a":[1]},{"a":true},{"a":{"!":"timestamp","value":1}},{"a":5},{"a":{"!":"decimal","value":{"places":1,"digits":5}}},{"a":{"!":"double","value":1.5}},{"a":{"!":"double","value":1.1}},{"a":"x","x-match":"any"},{"a":"X"},{"A":1},{"a":2},{"a":{"!":"float","value":1.5}},{"a":{"!":"float","value":1.1}},{"a":1,"b":1},{"a":1,"b":2},{"a":[[1]]},{"a":[[{"!":"short","value":1}]]},{"a":{"n":{"m":"x"}}},{"a":{"n":{"m":Buffer.from("x")}}},{"x-foo":null,"a":3}];
/** HEADER_BINDINGS index → indexes of the HEADER_MESSAGES it received. */
export const HEADER_MATCHES: readonly (readonly number[])[] = [[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36],[],[2,8,9,10,19,30,31],[2,8,9,10,19,30,31],[4],[3,4,5,11,24],[2,3,4,6,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,27,28,29,30,31,32,33,34,35,36],[2,3,4,5,6,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,27,28,29,30,31,32,33,34,35,36],[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36],[7,8],[7,8],[],[2,8,9,10,19,30,31],[2,8,9,10,19,30,31],[3,4,11,24],[12,13],[15],[17],[18],[20],[21],[2,8,9,10,19,30,31],[4],[22,28],[29],[12,13],[7,8,27,36],[30],[2,8,9,10,19,30,31],[32],[34]];

/**
 * x-consistent-hash: each string has one digit per publication, the N of the queue "qN" that
 * RabbitMQ delivered it to ("0": none).
 */
export const CHX_ROUTING_KEYS: readonly string[] = [...Array.from({ length: 300 }, (_, i) => `key-${i}`), '', 'ünïcödé.ключ'];
export const CHX_BY_ROUTING_KEY = {
  /** Bound q1 "1", q2 "2", q3 "3". */
  weights123: '32323233311312223133233313333233122333132213323323322222213332333221321212132332131331312131123332132232333223313333133333332231231133232323133213331313333333332233332133112333232212222232333323323332233312331233311333232223221333231322332323333212231133312221113332332322323112212333233231221322331213',
  /** Bound q1 "10", q2 "20", q3 "5", q4 "1". */
  weights10_20_5_1: '22223122221412322222222223232222212231323222222211224234211211322212222221213222213221221222222322121123322233122211222212123222211112212232221311212222222231131221131232211224211222121132221324323222221222133222123212222232211322133213322233321312313324241232112122113132222221221211212423122112322321',
  /** Bound q1 "3", q2 "2", q3 "4", then q2 "2" unbound. */
  afterUnbind: '31333333311311113133333333333333111333133113313313331111113333333113331313131331131331311331133331131131333113313333133333333131131133133313133133333313333333331333331133111333131111113131333313313331133331331133311333131113111333131333331313333113133133311111113331331311333113131333133131113311333133',
  /** Bound q1 "1", q2 "1", q1 "5" (no new buckets), then q1 "5" unbound (drops ALL of q1's buckets). */
  secondBindingUnbound: '22222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222222',
  /** Bound q1 "1", q2 "1", q1 "5". */
  secondBinding: '22222221111111121122222212112212121211121112221222222222211212212211121212122122121121211121121212121212221222112222112211222211221122222222112111211111121112112222122122112222122211121212112121221112121212211212211112212222121222211222212222112212211122112221112112212222121112112211121211221222221111',
};
/** hash-header "h" with q1..q4 bound "1".."4": values of header h (amqplib notation), then 100 "val-i" strings, then no headers, then headers without h. */
export const CHX_HEADER_VALUES: readonly unknown[] = ["abc","def",1,2,-5,70000000000,1.5,true,null,Buffer.from("bin"),[1,"a"],{"n":1},{"!":"long","value":7},{"!":"timestamp","value":1700000000},{"!":"decimal","value":{"places":2,"digits":314}}];
export const CHX_BY_HEADER = '432444431433333421234244432243343434144244432444442343244433133444344344243334423333134223444314221444444332332134222';
/** hash-property with q1..q3 bound "1".."3"; message i has messageId "mid-i", correlationId "cid-i", timestamp 1700000000 + 7i; the last has no properties. */
export const CHX_BY_PROPERTY = {
  message_id: '1112333322332323331232332323213123233333332113332133133131312',
  correlation_id: '3333312331333133323332232212333331121321221332312333323133332',
  timestamp: '3231322212211122222313132331322123211331223312333331332312222',
};
