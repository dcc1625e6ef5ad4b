import { ADMIN_ROUTES } from "./admin.ts";
import { ARTIFACT_ROUTES } from "./artifact-routes.ts";
import { CHAIN_ROUTES } from "./chains.ts";
import { DIGEST_ROUTES } from "./digests.ts";
import { HEALTH_ROUTES } from "./health.ts";
import { MARKETS_ROUTES } from "./markets.ts";
import { NOT_YET_AVAILABLE_ROUTES } from "./not-yet-available.ts";
import { OG_ROUTES } from "./og.ts";
import { ONCHAIN_ROUTES } from "./onchain.ts";
import { PEG_ROUTES } from "./peg.ts";
import { REDEMPTION_ROUTES } from "./redemption.ts";
import { RISK_ROUTES } from "./risk.ts";
import { RATINGS_ROUTES } from "./ratings.ts";
import { RISK_SIGNAL_ROUTES } from "./risk-signals.ts";
import { SNAPSHOT_ROUTES } from "./snapshots.ts";
import { STATUS_ROUTES } from "./status.ts";
import type { RouteDecl } from "./route.ts";
import { STABLECOIN_ROUTES } from "./stablecoins.ts";
import { STATIC_ROUTES } from "./static-files.ts";
import { TELEGRAM_ROUTES } from "./telegram.ts";
import { USDS_ROUTES } from "./usds.ts";
import { WRITE_ROUTES } from "./writes.ts";
import { YIELD_ROUTES } from "./yields.ts";

/**
 * The route table: every path the process serves, each declared once in `api/routes/<resource>.ts`.
 * The app, OpenAPI, Postman and the route tests all read this list.
 */
export const ROUTES: RouteDecl[] = [
  ...HEALTH_ROUTES,
  ...STATUS_ROUTES,
  ...STABLECOIN_ROUTES,
  ...CHAIN_ROUTES,
  ...PEG_ROUTES,
  ...ONCHAIN_ROUTES,
  ...RISK_ROUTES,
  ...RISK_SIGNAL_ROUTES,
  ...RATINGS_ROUTES,
  ...MARKETS_ROUTES,
  ...REDEMPTION_ROUTES,
  ...USDS_ROUTES,
  ...YIELD_ROUTES,
  ...SNAPSHOT_ROUTES,
  ...ARTIFACT_ROUTES,
  ...DIGEST_ROUTES,
  ...NOT_YET_AVAILABLE_ROUTES,
  ...OG_ROUTES,
  ...WRITE_ROUTES,
  ...TELEGRAM_ROUTES,
  ...ADMIN_ROUTES,
  ...STATIC_ROUTES,
];
