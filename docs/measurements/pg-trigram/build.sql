\timing on
SET max_parallel_maintenance_workers = 0;
SHOW maintenance_work_mem;
\! cat /proc/loadavg
CREATE INDEX ma_content ON trgm_exp.ma USING gin (content public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX ma_tool ON trgm_exp.ma USING gin (tool_text public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX mb_both ON trgm_exp.mb USING gin ((content || E'\n' || coalesce(tool_text, '')) public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX mp_content ON trgm_exp.mp USING gin (content public.gin_trgm_ops);
\! cat /proc/loadavg
CREATE INDEX mp_tool ON trgm_exp.mp USING gin (tool_text public.gin_trgm_ops) WHERE tool_text IS NOT NULL;
\! cat /proc/loadavg
CREATE INDEX mf_content ON trgm_exp.mf USING gin (content public.gin_trgm_ops) WITH (fastupdate = off);
\! cat /proc/loadavg
CREATE INDEX mf_tool ON trgm_exp.mf USING gin (tool_text public.gin_trgm_ops) WITH (fastupdate = off);
\! cat /proc/loadavg
ANALYZE trgm_exp.mb;
SELECT c.relname, pg_relation_size(c.oid) AS bytes, round(pg_relation_size(c.oid)/1048576.0,1) AS mb, round(pg_relation_size(c.oid)/1e6,1) AS b_per_msg FROM pg_class c WHERE relnamespace='trgm_exp'::regnamespace AND relkind='i' ORDER BY 1;
