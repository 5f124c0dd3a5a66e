/**
 * The shapes RabbitMQ shows runtime and global parameters in (management API and definitions
 * files), with their keys in RabbitMQ's order, and how Warren stores them (store definitions
 * 'parameter' and 'global-parameter'; the value stored is the record).
 */
import type { DefinitionRecord } from '../store/metadata-store.js';
import type { JsonValue } from './value.js';

/** GET /api/parameters… and a definitions file's `parameters`: value first, as RabbitMQ orders it. */
export interface ParameterRecord {
  value: JsonValue;
  vhost: string;
  component: string;
  name: string;
}

/** GET /api/global-parameters and a definitions file's `global_parameters`: name, then value. */
export interface GlobalParameterRecord {
  name: string;
  value: JsonValue;
}

/** GET /api/global-parameters/{name}: value, then name (rabbit_mgmt_format:parameter puts value first). */
export interface GlobalParameterJson {
  value: JsonValue;
  name: string;
}

/** GET /api/vhost-limits[/{vhost}]: vhost, then value. */
export interface VHostLimitsRecord {
  vhost: string;
  value: JsonValue;
}

export function parameterRecord(vhost: string, component: string, name: string, value: JsonValue): ParameterRecord {
  return { value, vhost, component, name };
}

export function parameterKey(vhost: string, component: string, name: string): string {
  return `${vhost}\u0000${component}\u0000${name}`;
}

export function parameterDefinition(r: ParameterRecord): DefinitionRecord {
  return { kind: 'parameter', key: parameterKey(r.vhost, r.component, r.name), value: r };
}

/** The record a stored 'parameter' definition holds, or undefined if it is not a well-formed one. */
export function parameterFromDefinition(d: DefinitionRecord): ParameterRecord | undefined {
  const v = d.value as Partial<ParameterRecord> | null;
  if (typeof v !== 'object' || v === null) return undefined;
  const { vhost, component, name, value } = v;
  if (typeof vhost !== 'string' || typeof component !== 'string' || typeof name !== 'string' || value === undefined) return undefined;
  if (d.key !== parameterKey(vhost, component, name)) return undefined;
  return parameterRecord(vhost, component, name, value);
}

/** A global parameter is stored under its name, its value the JSON value itself. */
export function globalParameterDefinition(r: GlobalParameterRecord): DefinitionRecord {
  return { kind: 'global-parameter', key: r.name, value: r.value };
}

export function globalParameterFromDefinition(d: DefinitionRecord): GlobalParameterRecord | undefined {
  return d.value === undefined ? undefined : { name: d.key, value: d.value as JsonValue };
}
