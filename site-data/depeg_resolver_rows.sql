-- /api/depeg-resolver rows: one per canonical incident, newest first.
select row_json from depeg_resolver_rows order by started_at desc, incident_key desc
