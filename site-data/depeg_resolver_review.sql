-- /api/depeg-resolver-review: review of sealed predictions against outcomes.
select review_json from depeg_resolver_review
