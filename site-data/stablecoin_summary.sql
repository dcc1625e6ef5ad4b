-- /api/stablecoin-summary: one summary per listed coin in id order; supplyByPegUsd as a MAP (pegType → USD,
-- empty without a current figure). supply_mode and supply_date give the artifact's data time, not the payload.
select
  stablecoin_id as id,
  name,
  symbol,
  peg_type as pegType,
  peg_mechanism as pegMechanism,
  price as priceUsd,
  case when price is null then 'missing' else price_source end as priceSource,
  case when price is null then null else price_confidence end as priceConfidence,
  supply_source as supplySource,
  case when circulating_usd is null then map() else map([peg_type], [circulating_usd]) end as supplyByPegUsd,
  {
    current: circulating_usd,
    prevDay: prev_day_usd,
    prevWeek: prev_week_usd,
    prevMonth: prev_month_usd,
    change1d: circulating_usd - prev_day_usd,
    change7d: circulating_usd - prev_week_usd,
    change30d: circulating_usd - prev_month_usd
  } as supplyUsd,
  case when circulating_usd is null then 'supply-buckets-missing' end as currentUnavailableReason,
  supply_mode,
  supply_date
from stablecoins
order by stablecoin_id
