/**
 * The query parameters every list takes, with rabbit_mgmt_util's exact rules:
 *
 * - `columns=a,b.c`: keep those keys. A dotted column descends into a nested object that
 *   RabbitMQ holds as a proplist (garbage_collection, message_stats, *_details, listeners) but
 *   returns the whole of one it holds as a map (arguments, backing_queue_status, client
 *   properties, the overview's totals): formatters mark the latter with asMap(). A proplist
 *   left with no key is written as [], as jsx writes an empty proplist.
 * - `sort=field` (dotted allowed) before the default sort keys, `sort_reverse=true`; values
 *   compare in Erlang term order (numbers < atoms < maps < lists < binaries), a missing one as 0.
 * - `page`, `page_size` (default 100, at most 500), `name` (case-insensitive substring, or a
 *   regular expression with `use_regex=true`): the paginated envelope.
 */
import { HttpError, badRequest } from './http.js';
import { Float, JsonItems, type Json, type JsonObject } from './json.js';
import { compareUtf8 } from '../sorted.js';

const maps = new WeakSet<object>();

/** Marks a nested object as one RabbitMQ holds as a map: `columns` never descends into it. */
export function asMap<T extends JsonObject>(obj: T): T {
  maps.add(obj);
  return obj;
}

/** columns=a,b.c as lists of path segments; undefined when absent (all columns). */
export function parseColumns(q: URLSearchParams): string[][] | undefined {
  const raw = q.get('columns');
  if (raw === null) return undefined;
  return raw.split(',').filter((c) => c !== '').map((c) => c.split('.').filter((s) => s !== ''));
}

/** rabbit_mgmt_util:extract_column_items. */
export function extractColumns(value: Json, cols: string[][] | undefined | 'all'): Json {
  if (cols === undefined || cols === 'all') return value;
  if (Array.isArray(value)) return (value as Json[]).map((v) => extractColumns(v, cols));
  if (value === null || typeof value !== 'object' || value instanceof Float || maps.has(value)) return value;
  const out: Record<string, Json> = {};
  let kept = 0;
  for (const [k, v] of Object.entries(value as JsonObject)) {
    if (v === undefined || !cols.some((c) => c[0] === k)) continue;
    out[k] = extractColumns(v, descend(k, cols));
    kept++;
  }
  return kept === 0 ? [] : out;
}

function descend(key: string, cols: string[][]): string[][] | 'all' {
  const sub: string[][] = [];
  for (const c of cols) {
    if (c[0] !== key) continue;
    if (c.length === 1) return 'all';
    sub.push(c.slice(1));
  }
  return sub;
}

/** Erlang's term order over the JSON values facts hold. */
function rank(v: Json | undefined): number {
  if (v === undefined || typeof v === 'number' || v instanceof Float) return 0;
  if (v === null || typeof v === 'boolean') return 1; // atoms
  if (typeof v === 'string') return 4; // binaries
  if (Array.isArray(v)) return 3;
  return maps.has(v as object) ? 2 : 3; // maps, proplists
}

export function compareTerms(a: Json | undefined, b: Json | undefined): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0: {
      const x = a === undefined ? 0 : a instanceof Float ? a.value : (a as number);
      const y = b === undefined ? 0 : b instanceof Float ? b.value : (b as number);
      return x - y;
    }
    case 1:
      return compareUtf8(String(a), String(b));
    case 4:
      return compareUtf8(a as string, b as string);
    default:
      return compareUtf8(JSON.stringify(a), JSON.stringify(b));
  }
}

/** rabbit_mgmt_util:get_dotted_value (the path split at its dots): a missing key (at any depth) sorts as 0. */
function dotted(item: Json, path: readonly string[]): Json {
  let v: Json | undefined = item;
  for (const key of path) {
    if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v) || v instanceof Float) return 0;
    v = (v as JsonObject)[key];
  }
  return v ?? 0;
}

/**
 * rabbit_mgmt_util:sort_list: by sort (if given) then the default keys; "" leaves the order, and
 * so does an empty defaultSort without a sort (for lists whose source gives RabbitMQ's order).
 */
export function sortItems(items: Json[], defaultSort: readonly string[], q: URLSearchParams): Json[] {
  const sort = q.get('sort');
  if (sort === '') return items;
  const keys = sort === null ? [...defaultSort] : [sort, ...defaultSort];
  if (keys.length === 0) return q.get('sort_reverse') === 'true' ? [...items].reverse() : items;
  const paths = keys.map((k) => k.split('.').filter((segment) => segment !== ''));
  const sorted = items
    .map((item) => ({ item, key: paths.map((path) => dotted(item, path)) }))
    .sort((a, b) => {
      for (let i = 0; i < keys.length; i++) {
        const c = compareTerms(a.key[i], b.key[i]);
        if (c !== 0) return c;
      }
      return compareTerms(a.item, b.item);
    })
    .map((x) => x.item);
  return q.get('sort_reverse') === 'true' ? sorted.reverse() : sorted;
}

interface Pagination {
  page: number;
  pageSize: number;
  name: string | null;
  useRegex: boolean;
}

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 500;

/** rabbit_mgmt_util:pagination_params; undefined without `page`. */
export function parsePagination(q: URLSearchParams): Pagination | undefined {
  const int = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null) return undefined;
    if (!/^[+-]?[0-9]+$/.test(v)) throw badRequest('Pagination parameters are invalid');
    return Number(v);
  };
  const page = int('page');
  const pageSize = int('page_size');
  if (page === undefined) return undefined;
  const size = pageSize ?? DEFAULT_PAGE_SIZE;
  if (page > 0 && size > 0 && size <= MAX_PAGE_SIZE) return { page, pageSize: size, name: q.get('name'), useRegex: q.get('use_regex') === 'true' };
  throw new HttpError(400, 'invalid_pagination_parameters',
    `Invalid pagination parameters: page number ${page}, page size ${pageSize ?? 'undefined'}`);
}

/** The `name` filter of pagination (case-insensitive substring, or a regular expression), made once. */
function nameFilter(p: Pagination): (name: unknown) => boolean {
  const wanted = p.name;
  if (wanted === null || wanted === '') return () => true;
  if (p.useRegex) {
    let re: RegExp;
    try {
      re = new RegExp(wanted, 'i');
    } catch {
      throw badRequest('Pagination parameters are invalid');
    }
    return (name) => typeof name === 'string' && re.test(name);
  }
  const lower = wanted.toLowerCase();
  return (name) => typeof name === 'string' && name.toLowerCase().includes(lower);
}

const nameOfItem = (item: Json): unknown => (item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as JsonObject)['name'] : undefined);

/** The paginated envelope of already sorted sources: those whose name passes the filter, the page's made into items. */
function paginate<T>(all: readonly T[], p: Pagination, nameOf: (source: T) => unknown, item: (source: T) => Json): Json {
  const matches = nameFilter(p);
  const filtered = all.filter((s) => matches(nameOf(s)));
  const offset = (p.page - 1) * p.pageSize;
  if (offset > filtered.length) {
    throw new HttpError(400, 'page_out_of_range', `Page out of range, page: ${p.page} page size: ${p.pageSize}, len: ${filtered.length}`);
  }
  const page = filtered.slice(offset, offset + p.pageSize).map(item);
  return {
    filtered_count: filtered.length,
    item_count: page.length,
    items: page,
    page: p.page,
    page_count: Math.trunc((filtered.length + p.pageSize - 1) / p.pageSize),
    page_size: p.pageSize,
    total_count: all.length,
  };
}

/**
 * A list reply: sorted (default keys, then `sort`), paginated when `page` is given, then cut to
 * `columns` (rabbit_mgmt_util:augment_resources and reply_list_or_paginate). With
 * columnsFirst, columns are cut before sorting, as reply_list does (bindings, channels,
 * connections, consumers): sorting by a column left out then sorts by nothing.
 */
export function listReply(items: Json[], q: URLSearchParams, defaultSort: readonly string[], opts: { columnsFirst?: boolean; paginate?: boolean } = {}): Json | JsonItems {
  const cols = parseColumns(q);
  const pagination = opts.paginate === false ? undefined : parsePagination(q);
  const list = sortItems(opts.columnsFirst ? items.map((i) => extractColumns(i, cols)) : items, defaultSort, q);
  if (pagination) return paginate(list, pagination, nameOfItem, (i) => extractColumns(i, cols));
  // Cut (unless already) and written a chunk at a time (a long list is not encoded in one turn).
  return new JsonItems(list.length, (from, to) => (opts.columnsFirst ? list.slice(from, to) : list.slice(from, to).map((i) => extractColumns(i, cols))));
}

/**
 * A list whose sources are in the order of its default sort, and whose items are made only
 * when needed: the page's when paginated, and otherwise a chunk at a time as the server writes
 * them (JsonItems), so that listing 100,000 queues neither holds the event loop for seconds
 * nor keeps every item in memory. The reply is listReply's; with `sort` given (or `columns`,
 * for a list whose columns are cut before sorting: `columnsFirst`), every item is made first
 * and listReply sorts them.
 */
export interface SortedSources<T> {
  /** In the order of the default sort. */
  readonly sources: readonly T[];
  /** What the pagination's `name` filter looks at (a list that paginates). */
  name?(source: T): string;
  /** The source's item, before `columns` cut it. */
  item(source: T): Json;
}

export function sortedListReply<T>(list: SortedSources<T>, q: URLSearchParams, defaultSort: readonly string[], opts: { columnsFirst?: boolean; paginate?: boolean } = {}): Json | JsonItems {
  if (q.get('sort') !== null || (opts.columnsFirst && q.get('columns') !== null)) return listReply(list.sources.map((s) => list.item(s)), q, defaultSort, opts);
  const cols = parseColumns(q);
  const item = (s: T): Json => extractColumns(list.item(s), cols);
  const sources = q.get('sort_reverse') === 'true' ? [...list.sources].reverse() : list.sources;
  const pagination = opts.paginate === false ? undefined : parsePagination(q);
  if (pagination) return paginate(sources, pagination, (s) => list.name?.(s), item);
  return new JsonItems(sources.length, (from, to) => sources.slice(from, to).map(item));
}

/** A single object reply cut to `columns`. */
export function objectReply(obj: Json, q: URLSearchParams): Json {
  return extractColumns(obj, parseColumns(q));
}
