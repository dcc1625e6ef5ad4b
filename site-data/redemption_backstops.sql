-- Redemption backstop entries (analytic redemption_backstops), one per coin with curated redemption facts.
with backstops as (
    select * from redemption_backstops
),

final as (
    select stablecoin_id, entry_json
    from backstops
    order by stablecoin_id
)

select * from final
