/**
 * What RabbitMQ keeps about a vhost besides its contents (vhost:metadata()): a description,
 * tags and the default queue type, stored under the store's definition kind 'vhost'.
 */
import type { DefinitionRecord } from '../store/metadata-store.js';

export interface VHostMetadata {
  description: string;
  tags: string[];
  /**
   * x-queue-type given to queues declared without one, when the type suits the declare
   * (rabbit_amqqueue:augment_declare_args); undefined = none.
   */
  defaultQueueType: string | undefined;
}

/** The queue types a vhost default may name (rabbit_queue_type:discover). */
export const QUEUE_TYPES = ['classic', 'quorum', 'stream'] as const;

export function defaultVHostMetadata(): VHostMetadata {
  return { description: '', tags: [], defaultQueueType: undefined };
}

/**
 * The metadata a configured vhost is created with on a new data dir (and restored with by a
 * reset): RabbitMQ creates its default vhost "/" described as "Default virtual host"
 * (rabbit:insert_default_data), other vhosts without a description.
 */
export function configuredVhostMetadata(name: string): VHostMetadata {
  return { ...defaultVHostMetadata(), description: name === '/' ? 'Default virtual host' : '' };
}

export function vhostDefinition(name: string, m: VHostMetadata): DefinitionRecord {
  const value: Record<string, unknown> = { name, description: m.description, tags: [...m.tags] };
  if (m.defaultQueueType !== undefined) value['default_queue_type'] = m.defaultQueueType;
  return { kind: 'vhost', key: name, value };
}

/** The vhost a stored definition describes, or undefined if it is not a well-formed one. */
export function vhostFromDefinition(r: DefinitionRecord): { name: string; metadata: VHostMetadata } | undefined {
  const v = r.value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null || v['name'] !== r.key) return undefined;
  const { description = '', tags = [], default_queue_type: dqt } = v;
  if (typeof description !== 'string' || !Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) return undefined;
  if (dqt !== undefined && typeof dqt !== 'string') return undefined;
  return { name: r.key, metadata: { description, tags, defaultQueueType: dqt } };
}
