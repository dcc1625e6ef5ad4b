import type { IncomingMessage, ServerResponse } from "node:http";
import type { LaneAuth } from "../lib/auth.ts";
import type { ProxyTrust } from "../lib/client-address.ts";
import { type FastPathHeaders, fastPathHeaders } from "../lib/fast-headers.ts";
import type { MaintenanceGate } from "../lib/maintenance.ts";
import type { Cors } from "./cors.ts";
import { errorAnswer } from "./errors.ts";
import { admitNodeRequest } from "./lane.ts";
import type { NodeHit, RouteResponses } from "./response-cache.ts";
import { sentHeaderList } from "./response-writer.ts";

/** What the Node fast path shares with the app: the lane checks, the response cache, CORS, maintenance, proxy trust and the app clock. */
export interface FastPathDeps {
  auth: LaneAuth;
  responses: RouteResponses;
  cors: Cors;
  maintenance?: MaintenanceGate;
  trust: ProxyTrust;
  /** The app clock (ms), read once per request for the cache and the lane; absent: each reads its own. */
  nowMs?: () => number;
}

/** A Node request handler that answered (true), left the request untouched for the app (false), or will say which. */
export type NodeAnswer = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

/**
 * The Node fast path: a keyed GET whose URL the app answered before, for the serving build and this
 * service second (RouteResponses.nodeHit; or once the app's render of this second in flight is stored:
 * RouteResponses.afterRender), is answered on Node's response after the
 * same lane step as the app's (admitNodeRequest), its errors written as the app writes them
 * (errorAnswer). False (nothing written) for anything else: other methods, maintenance on or unknown,
 * a header sent twice, a conditional request, a coding not stored yet. Synchronous when the lane was
 * decided without I/O; otherwise a promise of the same answer.
 */
export function nodeFastPath(deps: FastPathDeps): NodeAnswer {
  const { auth, responses, cors, maintenance, trust, nowMs } = deps;
  const fail = (res: ServerResponse, err: unknown, hit: NodeHit, origin: string | undefined) => {
    const r = errorAnswer(cors, err, hit.route.path, origin);
    res.writeHead(r.status, r.headers).end(r.body);
    return true;
  };
  const send = (res: ServerResponse, hit: NodeHit, origin: string | undefined) => {
    res.writeHead(200, sentHeaderList(hit.entry, cors.headers(origin), hit.coding, hit.body)).end(hit.body);
    return true;
  };
  const answer = (
    req: IncomingMessage,
    res: ServerResponse,
    hit: NodeHit,
    h: FastPathHeaders,
    now: number | undefined,
  ) => {
    let admitted: true | Promise<void>;
    try {
      admitted = admitNodeRequest(auth, hit.route, h, req, trust, now);
    } catch (err) {
      return fail(res, err, hit, h.origin);
    }
    if (admitted === true) return send(res, hit, h.origin);
    return admitted.then(
      () => send(res, hit, h.origin),
      (err: unknown) => fail(res, err, hit, h.origin),
    );
  };
  return (req, res) => {
    if (req.method !== "GET") return false;
    if (maintenance && !maintenance.knownOff()) return false;
    const h = fastPathHeaders(req.rawHeaders);
    if (!h || h.ifNoneMatch !== undefined) return false;
    const url = req.url ?? "";
    const now = nowMs?.();
    const hit = responses.nodeHit(url, h.acceptEncoding, now);
    if (hit) return answer(req, res, hit, h, now);
    // The first request of a new second is rendering this URL's answer: wait for it, then answer it
    // here (or leave the request to the app, having admitted nothing, when it is still not stored).
    const rendered = responses.afterRender(url);
    if (!rendered) return false;
    return rendered.then(() => {
      const later = nowMs?.();
      const hit = responses.nodeHit(url, h.acceptEncoding, later);
      return hit ? answer(req, res, hit, h, later) : false;
    });
  };
}

/**
 * A Node request listener: `fast` first, then `slow` (the app) for every request `fast` did not
 * answer, or that it failed on before writing anything.
 */
export function withFastPath(
  fast: NodeAnswer,
  slow: (req: IncomingMessage, res: ServerResponse) => unknown,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let done: boolean | Promise<boolean>;
    try {
      done = fast(req, res);
    } catch {
      done = false;
    }
    if (done === true) return;
    if (done === false) {
      if (!res.headersSent) void slow(req, res);
      return;
    }
    done.then(
      (answered) => {
        if (!answered) void slow(req, res);
      },
      () => {
        if (!res.headersSent) void slow(req, res);
      },
    );
  };
}
