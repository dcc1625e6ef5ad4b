-- contracts: every curated on-chain deployment of a registry coin, for matching coins by contract address.
with coins as (
    select * from registry_coins
),

unnested as (
    select coins.id, coins.symbol, unnest(cast(json(coins.contracts_json) as json[])) as contract
    from coins
),

final as (
    select
        id as "stablecoinId",
        symbol,
        json_extract_string(contract, '$.chain') as "chainId",
        json_extract_string(contract, '$.address') as address,
        cast(json_extract(contract, '$.decimals') as integer) as decimals
    from unnested
)

select * from final
order by "stablecoinId", "chainId", address
