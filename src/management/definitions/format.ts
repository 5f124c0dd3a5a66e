/**
 * RabbitMQ's definitions: the JSON that `GET /api/definitions` exports, `POST /api/definitions`
 * and `--definitions FILE` import (rabbit_definitions.erl). The shapes here are RabbitMQ 3.10's;
 * newer versions add fields (vhost metadata, queue `type`) that import accepts and ignores
 * where Warren does not model them.
 */

export interface UserDefinition {
  name: string;
  password_hash?: string;
  /** Import only: a plain password, hashed on import (never exported). */
  password?: string;
  hashing_algorithm?: string;
  /** An array, or RabbitMQ's comma-separated string. */
  tags?: string[] | string;
  limits?: Record<string, unknown>;
}

export interface VhostDefinition {
  name: string;
  description?: string;
  tags?: string[] | string;
  default_queue_type?: string;
  metadata?: { description?: string; tags?: string[]; default_queue_type?: string };
  tracing?: boolean;
}

export interface PermissionDefinition {
  user: string;
  vhost: string;
  configure: string;
  write: string;
  read: string;
}

export interface TopicPermissionDefinition {
  user: string;
  vhost: string;
  exchange: string;
  write: string;
  read: string;
}

/** A runtime parameter: operator policies (`operator_policy`) and vhost limits (`vhost-limits`) among them. */
export interface ParameterDefinition {
  vhost: string;
  component: string;
  name: string;
  value: unknown;
}

export interface GlobalParameterDefinition {
  name: string;
  value: unknown;
}

export interface PolicyDefinition {
  vhost: string;
  name: string;
  pattern: string;
  'apply-to'?: string;
  definition: Record<string, unknown>;
  priority?: number;
}

export interface QueueDefinition {
  name: string;
  vhost: string;
  durable: boolean;
  auto_delete: boolean;
  arguments: Record<string, unknown>;
  type?: string;
}

export interface ExchangeDefinition {
  name: string;
  vhost: string;
  type: string;
  durable: boolean;
  auto_delete: boolean;
  internal: boolean;
  arguments: Record<string, unknown>;
}

export interface BindingDefinition {
  source: string;
  vhost: string;
  destination: string;
  destination_type: 'queue' | 'exchange';
  routing_key: string;
  arguments: Record<string, unknown>;
}

export interface Definitions {
  rabbit_version?: string;
  rabbitmq_version?: string;
  product_name?: string;
  product_version?: string;
  users?: UserDefinition[];
  vhosts?: VhostDefinition[];
  permissions?: PermissionDefinition[];
  topic_permissions?: TopicPermissionDefinition[];
  parameters?: ParameterDefinition[];
  global_parameters?: GlobalParameterDefinition[];
  policies?: PolicyDefinition[];
  queues?: QueueDefinition[];
  exchanges?: ExchangeDefinition[];
  bindings?: BindingDefinition[];
}

/** The categories of a definitions document, in the order RabbitMQ exports them. */
export const CATEGORIES = [
  'users', 'vhosts', 'permissions', 'topic_permissions', 'parameters', 'global_parameters', 'policies', 'queues', 'exchanges', 'bindings',
] as const;

/**
 * Why an import failed, as RabbitMQ's management API reports it: 400 (404 for a per-vhost
 * import into a missing vhost) with `{"error":"bad_request","reason":<reason>}`. The reason is a
 * string or, as RabbitMQ serialises an Erlang tuple, an array (`["no_such_vhost","nope"]`).
 */
export class DefinitionsError extends Error {
  constructor(
    readonly reason: string | unknown[],
    readonly status: 400 | 404 | 500 = 400,
    /** The body's "error"; null for an empty body (500). */
    readonly error: string | null = status === 404 ? 'not_found' : status === 500 ? null : 'bad_request',
  ) {
    super(typeof reason === 'string' ? reason : JSON.stringify(reason));
  }

  /**
   * An Erlang error a malformed entry raises where RabbitMQ's import reads it, reported by its
   * name: `badarg` (a BIF given the wrong type: a password or permission pattern that is not a
   * string), `function_clause` (no clause or guard takes the value: a queue's name or durable).
   */
  static erlang(name: 'badarg' | 'function_clause'): DefinitionsError {
    return new DefinitionsError(name);
  }

  /** An entry RabbitMQ's import crashes on without catching it: 500 with an empty body. */
  static crashed(what: string): DefinitionsError {
    return new DefinitionsError(what, 500);
  }
}

/**
 * Parses a definitions body as RabbitMQ does: anything but a JSON object is
 * `failed_to_parse_json`; unknown top-level keys are ignored.
 */
export function parseDefinitions(body: string | Buffer): Definitions {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString());
  } catch {
    throw new DefinitionsError('failed_to_parse_json');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new DefinitionsError('failed_to_parse_json');
  return parsed as Definitions;
}

/** Tags as RabbitMQ reads them (rabbit_auth_backend_internal:tag_list_from/1): an array or a comma-separated string. */
export function tagList(tags: unknown): string[] {
  if (Array.isArray(tags)) return tags.map((t) => String(t).trim()).filter((t) => t !== '');
  if (typeof tags === 'string') return tags.split(',').map((t) => t.trim()).filter((t) => t !== '');
  return [];
}
