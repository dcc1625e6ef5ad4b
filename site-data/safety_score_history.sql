-- Safety score history rows (grade or score changes; the first row per coin is the seed), per coin oldest first.
select * from safety_score_history order by stablecoin_id, date
