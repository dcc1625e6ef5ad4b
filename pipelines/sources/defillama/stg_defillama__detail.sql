-- DefiLlama /stablecoin/{id} daily native supply, newest capture wins per key.
-- grain: one row per llama_id, chain_label (null = upstream total), date, peg_type.
with source as (
    select * from raw_defillama__stablecoin_detail
),

final as (
    select
        llama_id,
        chain_label,
        cast(date as date) as date,
        peg_type,
        circulating_native
    from source
    qualify row_number() over (
        partition by llama_id, chain_label, date, peg_type order by _observed_at desc
    ) = 1
)

select * from final
