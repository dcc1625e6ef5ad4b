import { usdsStatusArtifact } from "../../site-data/usds-status.ts";
import { bind, type RouteDecl } from "./route.ts";
import { declareTag } from "./tags.ts";

const tag = declareTag(
  "usds",
  "Sky USDS protocol status read on Ethereum (freeze module, implementation): 503 until a build holds a status capture.",
);

/**
 * Sky USDS protocol status (spec 4.1 `/api/usds-status`, cache key `usds-status`, budget 86400 s,
 * `standard` profile). Bound to an optional artifact: until a build holds a `usds.status` capture
 * (read over JSON-RPC by `tsx build/cli.ts capture` with `BALLAST_RPC_ETHEREUM` set) the file is not
 * published, so the route answers 503 `Data not yet available: usds-status` and health lists it as
 * not yet available.
 */
export const USDS_ROUTES: RouteDecl[] = [
  {
    kind: "json",
    operationId: "getUsdsStatus",
    method: "GET",
    path: "/api/usds-status",
    lane: "apiKey",
    tag,
    cache: "standard",
    meta: true,
    artifact: bind(usdsStatusArtifact),
    summary: "USDS protocol status (freeze module)",
    description: [
      "Sky USDS (Ethereum `0xdC035D45d973E3EC169d2276DDab16f1e407384F`, an ERC-1967 proxy) read over JSON-RPC at one block: `{ stablecoinId, token, freezeModuleActive, freezeCapabilityPresent, implementationAddress, knownNoFreezeImplementation, freezeProbe, totalSupplyRaw, readAt {blockNumber, blockHash, blockTimestamp}, source {kind, rpcEnv, calls, capturePath, observedAt}, updatedAt, _meta }`.",
      "`freezeModuleActive` is true when the implementation answers `isBlocked(address)` (selector `0xfbac3951`, probed with the zero address): the freeze/blocklist capability exists — it says nothing about any account. A revert or an empty answer means no freeze function. `freezeCapabilityPresent` carries the same value.",
      "`implementationAddress` is the ERC-1967 implementation slot (`0x360894a1…382bbc`); `knownNoFreezeImplementation` is true for `0x1923dfee706a8e78157416c29cbccfde7cdf4102`, recorded without a freeze function. `totalSupplyRaw` is `totalSupply()` in base units (18 decimals). Times are Unix seconds; `updatedAt` is the read block's timestamp.",
      "503 `Data not yet available: usds-status` (`Retry-After: 60`) while no build holds a status capture (`BALLAST_RPC_ETHEREUM=<url> npx tsx build/cli.ts capture`, then build).",
    ].join(" "),
  },
];
