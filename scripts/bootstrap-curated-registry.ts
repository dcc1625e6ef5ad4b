/**
 * One-off bootstrap of `pipelines/registry/coins.curated.json` (already run; the committed file is
 * now the source of truth and is edited by hand: do not re-run over it).
 *
 * It drafts one curated record per coin from the recorded upstream inputs (DefiLlama peggedData and
 * list, Pharos core extract and cemetery): ticker, peg type and mechanism, DefiLlama / CoinGecko /
 * Pharos ids, death date, NAV flag from price evidence, floating flag from `peggedVAR`. The issuer
 * is drafted from the project domain of peggedData's `url` and then replaced by the hand-reviewed
 * values of {@link REVIEW} (issuer, ticker fixes, collision variants, cemetery rows merged into the
 * DefiLlama coin they describe). Never from the coin's name.
 *
 * Usage: tsx scripts/bootstrap-curated-registry.ts [--write] [--force]
 *   without --write: prints the draft and the coins whose issuer is still domain-derived;
 *   --write refuses to overwrite an existing file unless --force.
 */
import Papa from "papaparse";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadBuildConfig } from "../build/config.ts";
import { coinIdFor, CURATED_PATH, type CuratedCoin, curatedProblems, formatCuratedCoins } from "../pipelines/registry/curated.ts";
import { REGISTRY_INPUTS } from "../pipelines/registry/generate-registry.ts";

type Review = Partial<Omit<CuratedCoin, "id" | "llamaId">> & { issuer: string };
const r = (issuer: string, extra: Partial<Review> = {}): Review => ({ issuer, ...extra });

/** Hand review by DefiLlama id (`pharosId` merges a cemetery row that lacks a llamaId). */
const REVIEW: Record<string, Review> = {
  1: r("Tether", { exchangeSymbols: ["USDT"] }), 2: r("Circle", { exchangeSymbols: ["USDC"] }),
  3: r("Terraform Labs", { symbol: "UST", name: "TerraUSD" }), 4: r("Paxos"), 5: r("Sky"), 6: r("Frax Finance"),
  7: r("Techteryx"), 8: r("Liquity"), 9: r("Fei Protocol", { pharosId: "fei-fei-usd-2022-08" }), 10: r("Abracadabra"),
  11: r("Paxos"), 12: r("Neutrino", { pharosId: "usdn-neutrino-usd-2022-04" }), 13: r("Yeti Finance"), 14: r("Tron DAO Reserve"),
  15: r("Inverse Finance"), 16: r("Parrot", { pharosId: "pai-parrot-usd-2023-07" }), 17: r("Stable Universal", { pharosId: "husd-husd-2022-10" }),
  18: r("Synapse", { symbol: "nUSD" }), 19: r("Gemini"), 20: r("Alchemix", { symbol: "alUSD" }), 21: r("CoinFLEX", { symbol: "flexUSD", pharosId: "flexusd-flexusd-2022-06" }),
  22: r("Synthetix", { symbol: "sUSD" }), 23: r("Origin Protocol"), 24: r("Mento"), 25: r("Reserve", { pharosId: "rsv-reserve-2023-03" }),
  26: r("mStable", { pharosId: "musd-mstable-usd-2023-04" }), 27: r("OKLink", { pharosId: "usdk-usdk-2023-06" }),
  28: r("Venus", { pharosId: "vai-vai-2021-09" }), 29: r("Hector Network", { pharosId: "tor-tor-2023-07" }), 30: r("Money on Chain"),
  31: r("Spice Trade"), 32: r("Sperax", { symbol: "USDs", pharosId: "usds-sperax-usd-2023-02" }), 33: r("Unit Protocol", { pharosId: "usdp-usdp-stablecoin-2023-06" }),
  34: r("USD Balance"), 37: r("JUST", { pharosId: "usdj-just-usdj-2025-08" }), 38: r("Algofi"),
  39: r("Volt Protocol", { pharosId: "volt-volt-protocol-2022-08" }), 40: r("Reflexer", { pharosId: "rai-rai-reflex-index-2024-02" }),
  41: r("Float Protocol", { pharosId: "float-float-protocol-2025-07" }), 42: r("Kava"), 43: r("GMO Trust", { pharosId: "zusd-gmo-zusd-2025-06" }),
  44: r("dForce"), 45: r("Acala", { symbol: "aUSD", name: "Acala USD", pharosId: "ausd-acala-usd-2023-07" }), 46: r("Overnight", { pharosId: "usd-usd-2025-01" }),
  48: r("AstridDAO"), 49: r("Tether", { pharosId: "eurt-euro-tether-2024-11" }), 50: r("Circle"), 51: r("STASIS"), 52: r("Mento"),
  53: r("Synthetix", { symbol: "sEUR", pharosId: "seur-synthetix-seur-2024-07" }), 54: r("Decentral Bank"), 55: r("Angle", { pharosId: "eura-angle-eura-2026-03" }),
  56: r("Parallel"), 57: r("Hedge", { pharosId: "ush-hedge-usd-2024-06" }), 58: r("Taiga Protocol"), 59: r("Ergo"), 60: r("HomeCoin Finance"),
  61: r("FIAT DAO"), 62: r("JPEG'd", { pharosId: "pusd-jpeg-d-pusd-2024-06" }), 63: r("Fantom Foundation"),
  64: r("UXD Protocol", { pharosId: "uxd-uxd-stablecoin-2024-08" }), 65: r("Hubble"), 66: r("Frax Finance"), 67: r("Beanstalk"),
  68: r("Lemma Finance"), 70: r("Fluid"), 71: r("Vesta Finance", { pharosId: "vst-vesta-stable-2023-09" }), 72: r("Kolibri"),
  73: r("USDtz", { symbol: "USDtz" }), 74: r("Moremoney"), 75: r("Youves"), 76: r("Interest Protocol"), 78: r("Canto"), 79: r("Lista DAO", { symbol: "lisUSD" }), 81: r("Kujira"),
  82: r("Arable", { symbol: "arUSD" }), 83: r("Real Protocol"), 84: r("zkBob", { pharosId: "bob-zkbob-bob-2024-10" }), 85: r("Tangible"), 87: r("Bank of Chain"),
  88: r("Indigo Protocol", { symbol: "iUSD" }), 89: r("Silo Finance"), 90: r("Shareslake"), 91: r("Iron Bank", { pharosId: "ibeur-iron-bank-euro-2023-12" }),
  92: r("Don't Die Meme"), 93: r("COTI"), 94: r("Bao Finance"), 96: r("Coin98"), 97: r("Platypus"), 98: r("Membrane Finance"),
  99: r("Stabl.fi"), 100: r("Emptyset"), 101: r("Monerium"), 102: r("Offshift", { symbol: "anonUSD" }), 103: r("Nereus Finance"), 104: r("Davos Protocol"),
  105: r("DeFi Franc"), 106: r("Reserve", { symbol: "eUSD" }), 107: r("CZodiac"), 108: r("DAM Finance"), 109: r("Lybra", { symbol: "eUSD", pharosId: "eusd-lybra-eusd-2024-06" }),
  110: r("Curve"), 111: r("Overnight", { pharosId: "dai-overnight-dai-2024-12" }), 112: r("Overnight"), 113: r("Shade Protocol"),
  114: r("AladdinDAO"), 115: r("Raft"), 116: r("Gravita", { pharosId: "grai-gravita-grai-2025-06" }), 117: r("Ethos"), 118: r("Aave"),
  119: r("First Digital", { exchangeSymbols: ["FDUSD"] }), 120: r("PayPal"), 121: r("Psy"), 122: r("GMO Trust"),
  123: r("Preon", { pharosId: "star-preon-star-2024-06" }), 124: r("Lybra", { pharosId: "peusd-lybra-peusd-2024-06" }),
  125: r("Lybra", { symbol: "eUSD", variant: "v2" }), 126: r("Prisma", { pharosId: "mkusd-prisma-mkusd-2024-11" }), 127: r("Alternity"),
  128: r("ZDEX"), 129: r("Ondo"), 130: r("Savvy", { symbol: "svUSD" }), 131: r("UAHT"), 132: r("Mountain Protocol"), 133: r("Num Finance"), 134: r("Phase"),
  135: r("Agoric"), 137: r("Membrane"), 138: r("ARYZE"), 139: r("ARYZE"), 140: r("ARYZE"), 142: r("HYDT Protocol"),
  143: r("Verified USD Foundation", { pharosId: "usdv-verified-usd-2024-12" }), 144: r("Reserve", { symbol: "hyUSD", pharosId: "hyusd-high-yield-usd-2025-06" }),
  145: r("Paytrie"), 146: r("Ethena"), 147: r("Anchored Coins"), 148: r("Mynth"), 149: r("Sable"), 150: r("Colb"), 151: r("Goal3"),
  152: r("Liquid Loans"), 153: r("Binance"), 154: r("Bucket Protocol"), 155: r("Glo Foundation"), 157: r("VNX"), 158: r("VNX"),
  159: r("RIF on Chain"), 160: r("Sovryn"), 161: r("Quantoz"), 162: r("BabelFish"), 163: r("Prisma", { pharosId: "ultra-prismalrt-ultra-2024-11" }),
  164: r("Pagolinea"), 165: r("Novatti"), 166: r("Cygnus"), 167: r("AladdinDAO"), 168: r("AladdinDAO"), 169: r("Goku"), 170: r("3A DAO"),
  171: r("Let's Get HAI", { pegType: "peggedVAR", floatingPeg: true }), 172: r("Blast"), 173: r("BlackRock"), 174: r("AladdinDAO"),
  175: r("Powercity"), 176: r("Fathom"), 177: r("Nostra"), 178: r("Reserve"), 179: r("Yamato"), 180: r("Breadchain"), 181: r("Zunami"),
  182: r("Zunami"), 183: r("BTCFi"), 184: r("Magma"), 185: r("Gyroscope"), 186: r("ISC Money"), 187: r("Reserve"), 188: r("Orby Network"),
  189: r("AladdinDAO"), 190: r("Reserve"), 191: r("bitSmiley"), 192: r("Angle"), 193: r("Chi Protocol"), 195: r("Usual"), 196: r("Brale"),
  197: r("Resolv"), 198: r("Stable Jack"), 199: r("Mento"), 200: r("HLiquity"), 201: r("Powercity"), 202: r("Anzen"), 203: r("Chad Finance"),
  204: r("Balanced", { symbol: "bnUSD" }), 205: r("Agora"), 206: r("Opus"), 207: r("DYAD"), 208: r("DackieSwap"), 209: r("Sky"), 210: r("Elixir", { symbol: "deUSD" }), 211: r("Threshold", { symbol: "thUSD" }),
  212: r("Thala", { pharosId: "mod-move-dollar-2025-06" }), 213: r("M0"), 214: r("Stables Labs"), 215: r("Moneta"), 216: r("Solayer"),
  217: r("Reservoir"), 218: r("River"), 219: r("Astherus"), 220: r("Avalon"), 221: r("Ethena", { symbol: "USDtb" }), 222: r("Parallel"), 223: r("TREN Finance"),
  224: r("dTRINITY"), 225: r("Zoth"), 226: r("Frankencoin"), 227: r("Liquity", { variant: "legacy", pharosId: "l-bold-legacy-bold-2025-02" }),
  228: r("Quill"), 229: r("Level", { symbol: "lvlUSD", pharosId: "lvlusd-level-usd-2025-10" }), 230: r("Noon"), 231: r("Berachain"), 232: r("Pinto"),
  233: r("The Standard"), 234: r("WSPN"), 235: r("Frax Finance", { symbol: "frxUSD" }), 236: r("Synnax"), 237: r("Circle"), 238: r("Rings", { symbol: "scUSD" }), 239: r("StablR"),
  240: r("StablR"), 241: r("OpenEden"), 242: r("Hermetica", { symbol: "USDh" }), 243: r("Coinshift", { pharosId: "csusdl-coinshift-csusdl-2025-10" }),
  244: r("Paxos"), 245: r("Anzens"), 246: r("Falcon Finance"), 247: r("Schuman"), 248: r("Secured Finance"), 249: r("Transfero"),
  250: r("Ripple"), 251: r("Felix", { symbol: "feUSD" }), 252: r("StandX"), 253: r("Bima"), 254: r("Societe Generale-FORGE"), 255: r("Aegis"), 256: r("Resupply", { symbol: "reUSD" }),
  257: r("OpenEden"), 258: r("Old Vector"), 259: r("Arche Protocol"), 260: r("VDollar"), 261: r("Solomon"), 262: r("World Liberty Financial"),
  263: r("Hex Trust"), 264: r("XBANKING"), 265: r("Orki"), 266: r("Plume"), 267: r("Roots"), 268: r("Yala"), 269: r("Liquity"),
  270: r("Franklin Templeton"), 271: r("Avant"), 272: r("Figure"), 273: r("Asymmetry"), 274: r("Quantoz"), 275: r("Quantoz"),
  276: r("Hyperstable"), 277: r("SMARDEX"), 278: r("PicWe"), 279: r("Parabol"), 280: r("Tether", { pharosId: "cnht-tether-cnh-2026-02" }),
  281: r("Tether"), 282: r("Noble"), 283: r("Unitas", { geckoId: "unitas" }), 284: r("MNEE"), 285: r("FSL"), 286: r("Paxos"), 287: r("Nerite"), 288: r("Ebisu"),
  289: r("StraitsX"), 290: r("StraitsX"), 291: r("Parallel"), 292: r("VNX"), 293: r("Sigma Money"), 294: r("NonDollar"),
  295: r("Asymmetry", { variant: "v2" }), 296: r("Cap", { symbol: "cUSD" }), 297: r("Main Street"), 298: r("infiniFi", { symbol: "iUSD" }), 299: r("APACX"), 300: r("BiLira"),
  301: r("Jigsaw", { symbol: "jUSD" }), 302: r("Hylo", { symbol: "hyUSD" }), 303: r("Mezo"), 304: r("USDU Finance"), 305: r("XSY"), 306: r("Gate"), 307: r("Societe Generale-FORGE"),
  308: r("Colt"), 309: r("USD.AI"), 310: r("Solstice"), 311: r("Inshallah"), 312: r("Hydration"), 313: r("MetaMask"),
  314: r("Palm", { pharosId: "pusd-palm-usd-2026-01" }), 315: r("USPD"), 316: r("Usecash"), 317: r("BCP Technologies"), 318: r("Brale"),
  319: r("AllUnity"), 320: r("Rocky"), 321: r("Native Markets"), 322: r("Last"), 323: r("Keiko Finance"), 324: r("Stablecoin.xyz"),
  325: r("Banking Circle"), 326: r("Metronome"), 327: r("Mu Digital"), 328: r("Mustang Finance"), 329: r("Beraborrow"), 330: r("Growth Protocol"),
  331: r("Piku"), 332: r("RAAC"), 333: r("MANTRA"), 334: r("Macropod"), 335: r("Jupiter"), 336: r("United Stables"), 337: r("Crux Finance"),
  338: r("Voltage Finance"), 339: r("Re Protocol"), 340: r("Multipli"), 341: r("Pleasing"), 342: r("MegaETH"), 343: r("Tether"),
  344: r("Yuzu"), 345: r("Uncap"), 346: r("Neutrl"), 347: r("USDGO"), 348: r("Fidelity"), 349: r("Pareto"), 350: r("Citrea"),
  351: r("Tetris"), 352: r("Tokenhaus"), 353: r("GAIB"), 354: r("Apyx"), 355: r("JPYC Inc."), 356: r("Sonic Labs"), 357: r("Circuit DAO"),
  358: r("Mento"), 359: r("Mento"), 360: r("Mento"), 361: r("Mento"), 362: r("Mento"), 363: r("Mento"), 364: r("DorkFi"), 365: r("Avenia"),
  366: r("Alto"), 367: r("Mento"), 368: r("Mento"), 369: r("Mento"), 370: r("Mento"), 371: r("Mento"), 372: r("Mento"), 373: r("Sui"),
  374: r("Behodler"), 375: r("Monet"), 376: r("Ethena"), 377: r("Nerona"), 378: r("Somnia"), 379: r("Ripio"), 380: r("Ripio"),
  381: r("Ripio"), 382: r("Ripio"), 383: r("Ripio"), 384: r("Ripio"), 385: r("Tempo"), 386: r("Western Union"), 387: r("Tetra"),
  388: r("Initia", { pegMechanism: "crypto-backed" }), 389: r("CFX"), 390: r("FinChain"), 391: r("BlockApps"), 392: r("Newrails"),
  393: r("Harbor"), 394: r("Monolith"), 395: r("Falcon Finance"), 396: r("dead.box"), 397: r("Hyperbeat"), 398: r("Valtorum"),
  399: r("Agant"), 400: r("Saturn"), 401: r("Tori"), 402: r("Kerne"), 403: r("Money Protocol"), 404: r("Monetrix"), 405: r("Alpha Partner"),
  406: r("Polymarket"), 407: r("Unity"), 408: r("Ondo"), 409: r("USDKG"), 410: r("Universal"), 411: r("StableMint"), 412: r("MYRT"),
  413: r("SoulPeg"), 414: r("RCoins"), 415: r("RCoins"), 416: r("Telcoin"), 417: r("Defi.money"), 418: r("Cod3x"), 419: r("Elara"),
  420: r("Startale"), 421: r("Flying Tulip"), 422: r("Forte"), 423: r("dEURO"), 424: r("Stablecorp"),
  425: r("The Fedz", { pharosId: "fusd-fedz-2026-05" }), 426: r("Streamflow"), 427: r("Shinsei Trust"), 428: r("IQ"), 429: r("BDACS"),
  430: r("SoFi"), 431: r("Delpho"), 432: r("Multipli"), 433: r("Hyperoute"), 434: r("Base Dollar"),
};

/** Coins only Pharos knows (cemetery rows without a DefiLlama coin, core coins DefiLlama does not list). */
const PHAROS_ONLY: Record<string, Review> = {
  "msy-main-street": r("Main Street", { pegMechanism: "crypto-backed" }),
  "buck-buck-assets": r("Buck Assets", { pegMechanism: "unknown" }),
  "xusd-stream-finance-xusd-2025-11": r("Stream Finance", { pegMechanism: "crypto-backed" }),
  "dyadv1-dyad-v1-2024-06": r("DYAD", { symbol: "DYAD", variant: "v1", pegMechanism: "crypto-backed" }),
  "usdc-m-multichain-usdc-2023-07": r("Multichain", { pegMechanism: "fiat-backed" }),
  "dei-dei-2022-05": r("DEUS Finance", { pegMechanism: "algorithmic" }),
  "krt-terrakrw-2022-05": r("Terraform Labs", { pegType: "peggedKRW", pegMechanism: "algorithmic" }),
  "cash-cashio-dollar-2022-03": r("Cashio", { pegMechanism: "crypto-backed" }),
  "iron-iron-2021-06": r("Iron Finance", { pegMechanism: "algorithmic" }),
  "esd-empty-set-dollar-2021-01": r("Emptyset", { pegMechanism: "algorithmic" }),
  "dsd-dynamic-set-dollar-2021-01": r("Dynamic Set Dollar", { pegMechanism: "algorithmic" }),
  "bac-basis-cash-2021-01": r("Basis Cash", { pegMechanism: "algorithmic" }),
  "usnbt-nubits-2018-03": r("NuBits", { pegMechanism: "algorithmic" }),
  "bean-beanstalk-v1-2022-04": r("Beanstalk", { variant: "v1", pegMechanism: "algorithmic" }),
  "paxg-paxos": r("Paxos", { pegType: "peggedXAU", pegMechanism: "commodity-backed" }),
  "xaut-tether": r("Tether", { pegType: "peggedXAU", pegMechanism: "commodity-backed" }),
};

/**
 * NAV tokens, established from the recorded prices: yield accrues into the price (DefiLlama list
 * price 2025-09-07 well above $1 and `yieldBearing` in peggedData, or Pharos `flags.navToken`).
 * USYC 1.099, USDY 1.082, TBILL 1.12, Solayer sUSD 1.11, USD3 1.060, KNOX 1.073, csUSDL 1.032.
 * Yield-bearing coins kept at $1 (BUIDL, BENJI, YLDS, rebasing or staking-vault designs, ARYZE,
 * Solomon USDv, Harbor haEUR) are not NAV tokens.
 */
const NAV_LLAMA_IDS = new Set(["129", "178", "187", "216", "237", "243", "257"]);

/** CoinGecko market-cap scrape `coin_name` → DefiLlama id of the coin. */
const ARCHIVE_NAMES: Record<string, string> = {
  "Tether": "1", "USDC": "2", "Dai": "5", "USDS": "209", "Ethena USDe": "146", "PayPal USD": "120", "USD1": "262",
  "Falcon USD": "246", "Global Dollar": "286", "Ripple USD": "250", "USDD": "14", "Usdd": "14",
  "Ondo U S Dollar Token": "408", "Cap Usd": "296",
};
/** Scrape names that are not stablecoins of the registry (a lending receipt, an LP token). */
const ARCHIVE_NOT_COINS = new Set(["Aave Usdc Linea", "Lp Scurve"]);

/** Draft issuer from a project URL: the registrable label of the host (`app.sky.money` → `Sky`). */
export function issuerFromUrl(url: string | undefined): string | null {
  if (!url) return null;
  let host: string;
  try { host = new URL(url.trim()).hostname.toLowerCase(); } catch { return null; }
  const labels = host.split(".").filter((l) => l !== "www");
  const secondLevel = new Set(["co", "com", "org", "net"]);
  const i = labels.length >= 3 && secondLevel.has(labels[labels.length - 2]) ? labels.length - 3 : labels.length - 2;
  const label = labels[Math.max(0, i)];
  return label ? label.charAt(0).toUpperCase() + label.slice(1) : null;
}

type Asset = { id: string; name: string; symbol: string; url?: string; gecko_id?: string | null; pegType: string; pegMechanism?: string; deadFrom?: string; price?: number | null };
type CoreCoin = { id: string; symbol: string; llamaId?: string | null; geckoId?: string | null; flags?: { navToken?: boolean; pegCurrency?: string } };
type CemRow = { id: string; symbol: string; llamaId: string; pegCurrency: string; deathDate: string };

const GECKO_ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Builds the draft records. Throws when a reviewed id is missing or the draft breaks an invariant. */
export function bootstrapCuratedCoins(captureDir: string): { records: CuratedCoin[]; domainOnly: string[] } {
  const read = (p: string) => readFileSync(join(captureDir, p), "utf8");
  const metadata = JSON.parse(read(REGISTRY_INPUTS.metadata)) as Asset[];
  const list = (JSON.parse(read(REGISTRY_INPUTS.list)) as { peggedAssets: Asset[] }).peggedAssets;
  const core = JSON.parse(read(REGISTRY_INPUTS.core)) as CoreCoin[];
  const cemetery = Papa.parse<CemRow>(read(REGISTRY_INPUTS.cemetery), { header: true, skipEmptyLines: true }).data;
  const geckoMarkets = new Set((JSON.parse(read("zacheryglass-stablecoinwatch/coingecko_raw_output.json")) as { id: string }[]).map((c) => c.id));
  const archive = Papa.parse<{ coin_name: string }>(read("partrita-stablecoin-tracker/stablecoin_marketcap.csv").replace(/^\uFEFF/, ""), { header: true, skipEmptyLines: true }).data;

  const meta = new Map(metadata.map((a) => [a.id, a]));
  const listed = new Map(list.map((a) => [a.id, a]));
  const coreByLlama = new Map(core.filter((c) => c.llamaId).map((c) => [c.llamaId!, c]));
  const cemByLlama = new Map(cemetery.filter((c) => c.llamaId).map((c) => [c.llamaId, c]));
  const cemById = new Map(cemetery.map((c) => [c.id, c]));
  const archiveByLlama = new Map<string, string[]>();
  for (const name of [...new Set(archive.map((a) => a.coin_name))].sort()) {
    if (ARCHIVE_NOT_COINS.has(name)) continue;
    const llamaId = ARCHIVE_NAMES[name];
    if (!llamaId) throw new Error(`archive name ${name} is not mapped`);
    archiveByLlama.set(llamaId, [...(archiveByLlama.get(llamaId) ?? []), name]);
  }

  /** CoinGecko id: Pharos core's; else the first candidate CoinGecko's markets list knows; else peggedData's, then the list's. */
  const geckoFor = (candidates: (string | null | undefined)[]): string | null => {
    const valid = candidates.filter((g): g is string => !!g && GECKO_ID.test(g) && !/fake|wrong/.test(g));
    return valid.find((g) => geckoMarkets.has(g)) ?? valid[0] ?? null;
  };

  const records: CuratedCoin[] = [];
  const domainOnly: string[] = [];
  const llamaIds = [...new Set([...meta.keys(), ...listed.keys()])].sort((a, b) => Number(a) - Number(b));
  for (const llamaId of llamaIds) {
    const m = meta.get(llamaId), l = listed.get(llamaId);
    const a = (m ?? l)!;
    const cur = coreByLlama.get(llamaId);
    const rev = REVIEW[llamaId];
    const issuer = rev?.issuer ?? issuerFromUrl(m?.url) ?? "Unknown";
    if (!rev) domainOnly.push(`${llamaId} ${a.symbol} ${a.name} ${m?.url ?? "-"} → ${issuer}`);
    const cem = rev?.pharosId ? cemById.get(rev.pharosId) : cemByLlama.get(llamaId);
    if (rev?.pharosId && !cem && cur?.id !== rev.pharosId) throw new Error(`${llamaId}: unknown pharosId ${rev.pharosId}`);
    const symbol = rev?.symbol ?? a.symbol;
    const pegType = rev?.pegType ?? a.pegType;
    const floating = pegType === "peggedVAR";
    const nav = NAV_LLAMA_IDS.has(llamaId) || cur?.flags?.navToken === true;
    const deadFrom = m?.deadFrom ?? l?.deadFrom ?? cem?.deathDate;
    records.push({
      id: coinIdFor(symbol, issuer, rev?.variant),
      symbol, issuer,
      ...(rev?.variant ? { variant: rev.variant } : {}),
      ...(rev?.name ? { name: rev.name } : {}),
      pegType,
      pegMechanism: rev?.pegMechanism ?? (a.pegMechanism === "crytpo-backed" ? "crypto-backed" : a.pegMechanism ?? "unknown"),
      ...(nav ? { navToken: true as const } : {}),
      ...(floating ? { floatingPeg: true as const } : {}),
      llamaId,
      geckoId: rev?.geckoId !== undefined ? rev.geckoId : cur?.geckoId ?? geckoFor([m?.gecko_id, l?.gecko_id]),
      ...(cur ? { pharosId: cur.id } : cem ? { pharosId: cem.id } : {}),
      ...(rev?.exchangeSymbols ? { exchangeSymbols: rev.exchangeSymbols } : {}),
      ...(archiveByLlama.has(llamaId) ? { archiveNames: archiveByLlama.get(llamaId) } : {}),
      ...(deadFrom ? { deadFrom } : {}),
    });
  }
  const usedPharos = new Set(records.map((x) => x.pharosId).filter(Boolean));
  for (const [pharosId, rev] of Object.entries(PHAROS_ONLY)) {
    const cem = cemById.get(pharosId);
    const cur = core.find((c) => c.id === pharosId);
    if (!cem && !cur) throw new Error(`unknown Pharos id ${pharosId}`);
    const symbol = rev.symbol ?? (cem ?? cur)!.symbol;
    const pegCurrency = cem?.pegCurrency ?? cur?.flags?.pegCurrency ?? "USD";
    records.push({
      id: coinIdFor(symbol, rev.issuer, rev.variant), symbol, issuer: rev.issuer,
      ...(rev.variant ? { variant: rev.variant } : {}),
      pegType: rev.pegType ?? `pegged${pegCurrency}`, pegMechanism: rev.pegMechanism ?? "unknown",
      llamaId: null, geckoId: cur?.geckoId ?? null, pharosId,
      ...(cem ? { deadFrom: cem.deathDate } : {}),
    });
    usedPharos.add(pharosId);
  }
  const missing = [...cemetery.map((c) => c.id), ...core.map((c) => c.id)].filter((id) => !usedPharos.has(id));
  if (missing.length > 0) throw new Error(`Pharos rows without a curated record: ${missing.join(", ")}`);

  const problems = curatedProblems([...records].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)));
  if (problems.length > 0) throw new Error(`draft breaks invariants:\n  ${problems.join("\n  ")}`);
  return { records, domainOnly };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { records, domainOnly } = bootstrapCuratedCoins(loadBuildConfig().BALLAST_CAPTURE_DIR);
  process.stdout.write(`${records.length} records; ${domainOnly.length} with a domain-derived issuer:\n${domainOnly.map((l) => `  ${l}\n`).join("")}`);
  if (process.argv.includes("--write")) {
    if (existsSync(CURATED_PATH) && !process.argv.includes("--force")) throw new Error(`${CURATED_PATH} exists: it is the source of truth now (pass --force to overwrite)`);
    writeFileSync(CURATED_PATH, formatCuratedCoins(records));
    process.stdout.write(`wrote ${CURATED_PATH}\n`);
  }
}
