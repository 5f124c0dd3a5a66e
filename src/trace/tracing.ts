import type { Logger } from '../log.js';
import type { VHost } from '../vhost/vhost.js';
import { Tracer, type TraceOrigin } from './tracer.js';

/** What turning tracing on and off needs of the broker. */
export interface TracingDeps {
  readonly log: Logger;
  readonly vhosts: ReadonlyMap<string, VHost>;
  /** The node name the traced copies carry. */
  node(): string;
  nextMessageId(): number;
  /** A new pid-like name (NodeIdentity.nextProcessName). */
  nextProcessName(): string;
}

/**
 * Broker.tracing: which vhosts are traced (rabbit_trace:start/stop/enabled). As in RabbitMQ the
 * list is the node's own runtime setting (the `trace_vhosts` application variable): it is not
 * stored, so a restart turns tracing off everywhere, and not exported with the definitions; it
 * belongs to the vhost name, so a vhost deleted and created again is still traced. Turned on
 * and off by `rabbitmqctl trace_on|trace_off`, here by the management API (PUT /api/vhosts/{v}
 * with "tracing"), definitions import (a vhost's "tracing") and this object.
 *
 * While a vhost is traced its VHost.tracer is set; the publish and deliver paths check that one
 * field and nothing else, so tracing costs nothing while it is off.
 */
export class Tracing {
  private readonly traced = new Set<string>();

  constructor(private readonly deps: TracingDeps) {}

  /** rabbit_trace:enabled: is the vhost traced. */
  enabled(vhost: string): boolean {
    return this.traced.has(vhost);
  }

  /** rabbit_trace:start (rabbitmqctl trace_on -p vhost). */
  start(vhost: string): void {
    if (this.traced.has(vhost)) {
      this.deps.log.info(`Tracing is already enabled for vhost '${vhost}'`);
      return;
    }
    this.deps.log.info(`Enabling tracing for vhost '${vhost}'`);
    this.traced.add(vhost);
    const v = this.deps.vhosts.get(vhost);
    if (v) this.attach(v);
  }

  /** rabbit_trace:stop (rabbitmqctl trace_off -p vhost). */
  stop(vhost: string): void {
    if (!this.traced.has(vhost)) {
      this.deps.log.info(`Tracing is already disabled for vhost '${vhost}'`);
      return;
    }
    this.deps.log.info(`Disabling tracing for vhost '${vhost}'`);
    this.traced.delete(vhost);
    const v = this.deps.vhosts.get(vhost);
    if (v) v.tracer = undefined;
  }

  /** start or stop. */
  set(vhost: string, on: boolean): void {
    if (on) this.start(vhost);
    else this.stop(vhost);
  }

  /** The traced vhosts, sorted (rabbit_trace keeps them lists:usort'ed). */
  list(): string[] {
    return [...this.traced].sort();
  }

  /** Tracing off everywhere (the test toolkit's reset: as right after a start). */
  clear(): void {
    for (const name of [...this.traced]) this.stop(name);
  }

  /**
   * Who publishes or gets through the management API: RabbitMQ's management plugin opens a
   * direct (Erlang) connection per request, named by its pid ("<rabbit@host.1795449011.1822.0>"),
   * and uses its channel 1. One origin per request.
   */
  directOrigin(user: string): TraceOrigin {
    return { connection: this.deps.nextProcessName(), channel: 1, user };
  }

  /** A vhost was created: traced if its name is (Broker.putVhost calls this). */
  attach(vhost: VHost): void {
    vhost.tracer = this.traced.has(vhost.name) ? new Tracer(vhost, this.deps.node(), this.deps.nextMessageId) : undefined;
  }
}
