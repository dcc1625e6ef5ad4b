-- assert: safety and report-card scores are integers from 0 to 100, null exactly when the grade is NR
select stablecoin_id from report_cards
where (safety_score is not null and (safety_score < 0 or safety_score > 100))
    or (report_card_score is not null and (report_card_score < 0 or report_card_score > 100))
    or ((safety_score is null) <> (safety_grade = 'NR'))
    or ((report_card_score is null) <> (report_card_grade = 'NR'));
-- assert: grades are A+ to F or NR
select stablecoin_id from report_cards where safety_grade not in ('A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D', 'F', 'NR') or report_card_grade not in ('A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D', 'F', 'NR');
-- assert: one card per coin
select stablecoin_id from report_cards group by stablecoin_id having count(*) > 1;
-- assert: history scores from 0 to 100 with grades A+ to F or NR, one row per coin and day
select stablecoin_id from safety_score_history
where (score is not null and (score < 0 or score > 100)) or grade not in ('A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D', 'F', 'NR') or (prev_grade is not null and prev_grade not in ('A+', 'A', 'A-', 'B+', 'B', 'B-', 'C+', 'C', 'C-', 'D', 'F', 'NR'));
select stablecoin_id from safety_score_history group by stablecoin_id, date having count(*) > 1
