/**
 * Just enough of Erlang's term model to reproduce what RabbitMQ users can observe of Erlang
 * terms: reply texts RabbitMQ builds with io_lib:format (format.ts, pretty.ts) and
 * erlang:phash2/1, which the consistent-hash exchange hashes with (phash2.ts).
 *
 * Dependency-free: how a field value becomes a term is the frame layer's business
 * (src/frame/field-term.ts).
 */

export type ErlTerm =
  | { readonly kind: 'atom'; readonly name: string }
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'binary'; readonly bytes: Uint8Array }
  | { readonly kind: 'tuple'; readonly items: readonly ErlTerm[] }
  | { readonly kind: 'list'; readonly items: readonly ErlTerm[] }
  /** A map, its entries in Erlang's term order (as maps:to_list gives them for small maps). */
  | { readonly kind: 'map'; readonly entries: ReadonlyArray<readonly [ErlTerm, ErlTerm]> };

export const atom = (name: string): ErlTerm => ({ kind: 'atom', name });
export const int = (value: number | bigint): ErlTerm => ({ kind: 'int', value: BigInt(value) });
export const float = (value: number): ErlTerm => ({ kind: 'float', value });
/** A binary; a string gives its UTF-8 bytes. */
export const binary = (bytes: Uint8Array | string): ErlTerm => ({
  kind: 'binary',
  bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes,
});
export const tuple = (...items: ErlTerm[]): ErlTerm => ({ kind: 'tuple', items });
export const list = (items: readonly ErlTerm[]): ErlTerm => ({ kind: 'list', items });
/** An Erlang string: a list of character codes (one per latin1 character of s). */
export const charList = (s: string): ErlTerm => list([...s].map((c) => int(c.charCodeAt(0))));
export const map = (entries: ReadonlyArray<readonly [ErlTerm, ErlTerm]>): ErlTerm => ({ kind: 'map', entries });
