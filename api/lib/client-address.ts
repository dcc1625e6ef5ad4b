import { BlockList, isIP } from "node:net";

/**
 * The client address of a request behind proxies (per-IP limits: failed key attempts, donor claims,
 * feedback). By default it is the socket's peer. With trusted proxies (`TRUSTED_PROXIES`) it is taken
 * from the forwarding headers, but only through trusted hops:
 * - `X-Forwarded-For` is read right to left (each proxy appends the address it received the request
 *   from): starting at the socket peer, while the current hop is trusted the next address to its left
 *   is taken; the first untrusted one is the client (all trusted: the leftmost). A client can prepend
 *   anything, never get past an untrusted hop.
 * - `CF-Connecting-IP` (set, and overwritten when a client sends it, by Cloudflare's edge) is the
 *   client when the socket peer is trusted, and ignored otherwise.
 * Same semantics as the `proxy-addr` package (Express's `trust proxy`), on Node's `net.BlockList`.
 */

/** Whether the hop at `address`, `hop` steps from the API (0: the socket peer), may report the address before it. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/** No proxy trusted: the socket peer is the client. */
export const TRUST_NONE: ProxyTrust = () => false;

/** Named ranges of `TRUSTED_PROXIES` (as `proxy-addr` names them). */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/** `address` without an IPv4-mapped IPv6 prefix (`::ffff:10.0.0.1` → `10.0.0.1`) and without brackets. */
export function normalizeAddress(address: string): string {
  const a = address.trim().replace(/^\[(.*)\]$/, "$1");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped?.[1] ?? a;
}

/**
 * Parses `TRUSTED_PROXIES`: unset or empty → none; a whole number n → the n hops nearest the API,
 * whatever their address (0: none); otherwise a comma-separated list of addresses, CIDR ranges
 * (`10.0.0.0/8`, `2400:cb00::/32`) and the names `loopback`, `linklocal`, `uniquelocal`.
 * @throws Error naming the first entry that is none of these.
 */
export function parseTrustedProxies(value: string | undefined): ProxyTrust {
  const v = value?.trim() ?? "";
  if (v === "") return TRUST_NONE;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return hops === 0 ? TRUST_NONE : (_address, hop) => hop < hops;
  }
  const list = new BlockList();
  for (const raw of v.split(",")) {
    const entry = raw.trim();
    for (const range of NAMED_RANGES[entry] ?? [entry]) {
      const [address = "", bits, extra] = range.split("/");
      const family = isIP(address);
      const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
      const max = family === 6 ? 128 : 32;
      if (!family || extra !== undefined || !/^\d+$/.test(String(prefix)) || prefix > max)
        throw new Error(`TRUSTED_PROXIES: "${entry}" is not an address, a CIDR range, a hop count or a range name`);
      list.addSubnet(address, prefix, family === 6 ? "ipv6" : "ipv4");
    }
  }
  return (address) => {
    const a = normalizeAddress(address);
    const family = isIP(a);
    return family !== 0 && list.check(a, family === 6 ? "ipv6" : "ipv4");
  };
}

/**
 * The client address of a request: the socket peer (`socketAddress`; `local` when unknown, as in
 * tests without a socket) unless trusted hops report another (see the module comment). Forwarded
 * entries that are not IP addresses end the walk at the last good address.
 * @param header reads a request header by name (case-insensitive).
 */
export function clientAddress(
  socketAddress: string | undefined,
  header: (name: string) => string | undefined,
  trust: ProxyTrust,
): string {
  const peer = socketAddress ? normalizeAddress(socketAddress) : "local";
  if (trust === TRUST_NONE || !trust(peer, 0)) return peer;
  const cf = normalizeAddress(header("CF-Connecting-IP") ?? "");
  if (isIP(cf)) return cf;
  const forwarded = (header("X-Forwarded-For") ?? "")
    .split(",")
    .map(normalizeAddress)
    .filter((a) => a !== "")
    .reverse();
  let client = peer;
  for (let hop = 0; hop < forwarded.length; hop++) {
    if (hop > 0 && !trust(client, hop)) break;
    const next = forwarded[hop];
    if (!next || !isIP(next)) break;
    client = next;
  }
  return client;
}
