import { createHook } from "node:async_hooks";

/** The `process.nextTick` queue entry kept alive (see keepTickShapeAlive); undefined before the first call. */
let kept: object | undefined;

/**
 * Keeps one `process.nextTick` queue entry (Node's "TickObject") alive for the life of the process, so
 * that the hidden class V8 gives those entries never dies.
 *
 * Node makes each entry with an object literal whose first keys are computed (its async-id symbols);
 * V8 builds such an object's hidden class by transitions that only live objects keep. A server
 * answers a request with about eight ticks and keeps none once it is idle, so a full garbage
 * collection while idle (V8's memory reducer runs some after every load) lets the class die; the next
 * tick makes a new one, and after a few such collections the property-definition cache inside
 * `nextTick` stops caching: every tick then defines its properties through V8's runtime, for good.
 * Measured on `make run`'s server: a cached answer 15 → 23–25 µs of CPU after one idle collection; a
 * bare `node:http` server 13.5 → 16–20 µs after six, and no change with one entry kept
 * (docs/benchmarks.md). Call it as early as possible: the cache can be spoiled before the server
 * answers anything (opening a new embedded state store runs enough full collections; a server on a
 * fresh data dir started at 22 µs with the call made after that, 16.7 with it made first).
 * Idempotent. The entry is captured with an async hook enabled for one `nextTick` call and disabled
 * before returning; its callback is a no-op.
 */
export function keepTickShapeAlive(): void {
  if (kept) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === "TickObject" && !kept) kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
}

/** The entry keepTickShapeAlive keeps (tests), or undefined before it ran. */
export function keptTickObject(): object | undefined {
  return kept;
}
