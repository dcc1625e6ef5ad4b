-- Pools of the newest /pools capture with exactly one token, matched to one registry coin: the yield
-- universe (rankings, history, adapter coverage). Pool ids are stable across captures.
-- grain: one row per pool_id. pk: (pool_id)
with matches as (
    select * from pool_coin_matches
),

final as (
    select pool_id, any_value(stablecoin_id) as stablecoin_id
    from matches
    group by pool_id
    having count(*) = 1 and count(stablecoin_id) = 1
)

select * from final
order by pool_id
