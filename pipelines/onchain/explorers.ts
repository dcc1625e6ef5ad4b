/**
 * Block explorer of each registry chain: transaction and address URL templates (curated). A chain
 * without one gets null URLs rather than a guessed link.
 */
const EXPLORERS: Record<string, { tx: string; address: string }> = {
  ethereum: { tx: "https://etherscan.io/tx/", address: "https://etherscan.io/address/" },
  arbitrum: { tx: "https://arbiscan.io/tx/", address: "https://arbiscan.io/address/" },
  base: { tx: "https://basescan.org/tx/", address: "https://basescan.org/address/" },
  optimism: { tx: "https://optimistic.etherscan.io/tx/", address: "https://optimistic.etherscan.io/address/" },
  polygon: { tx: "https://polygonscan.com/tx/", address: "https://polygonscan.com/address/" },
  avalanche: { tx: "https://snowtrace.io/tx/", address: "https://snowtrace.io/address/" },
  bsc: { tx: "https://bscscan.com/tx/", address: "https://bscscan.com/address/" },
  gnosis: { tx: "https://gnosisscan.io/tx/", address: "https://gnosisscan.io/address/" },
  tron: { tx: "https://tronscan.org/#/transaction/", address: "https://tronscan.org/#/address/" },
};

/** Explorer URLs of a transaction and an address on `chainId`; nulls for a chain without a known explorer. */
export function explorerUrls(
  chainId: string,
  txHash: string,
  address: string,
): { explorerTxUrl: string | null; explorerAddressUrl: string | null } {
  const e = EXPLORERS[chainId];
  if (!e) return { explorerTxUrl: null, explorerAddressUrl: null };
  const tx = chainId === "tron" ? txHash.replace(/^0x/, "") : txHash;
  return { explorerTxUrl: e.tx + tx, explorerAddressUrl: e.address + address };
}
