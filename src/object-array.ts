/**
 * An empty array that holds objects from the start. `[]` starts as an array of small integers
 * (V8's elements kind) and turns into one of objects at its first push of an object. Compiled
 * code that has seen both kinds at a push checks for a small integer there, and the first push
 * into each new array throws that code away (a deoptimisation, then a recompilation of the whole
 * inlined path): for an array made per connection or per channel, once per connection. Arrays
 * made here are never of the first kind. Emptied in place (`length = 0`), they stay so.
 */
export function objectArray<T extends object>(): T[] {
  const a: T[] = [undefined as unknown as T];
  a.pop();
  return a;
}
