-- Report cards and safety scores of every listed coin (report_cards analytic), by id.
select * from report_cards order by stablecoin_id
