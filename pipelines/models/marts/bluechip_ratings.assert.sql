-- assert: primary key unique and not null
select slug, count(*) from bluechip_ratings group by slug having count(*) > 1 or slug is null;
-- assert: a row is either matched or carries its reason, never both
select * from bluechip_ratings where (stablecoin_id is null) = (unmatched_reason is null);
-- assert: a stablecoin id is rated at most once and names a registry coin
select stablecoin_id from bluechip_ratings where stablecoin_id is not null group by stablecoin_id having count(*) > 1
union all
select b.stablecoin_id from bluechip_ratings b left join registry_coins c on c.id = b.stablecoin_id where b.stablecoin_id is not null and c.id is null;
