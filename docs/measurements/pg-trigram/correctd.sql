SET max_parallel_workers_per_gather=0; SET enable_seqscan=off;
CREATE TEMP TABLE terms(term text); INSERT INTO terms VALUES ('ubernete'),('設定ファイル'),('utf8.RuneError'),('老婆の'),('zzqxjv');
CREATE TEMP TABLE res AS
SELECT 'A' v, t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.da m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') m
UNION ALL SELECT 'B', t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.db m WHERE (m.content || E'\n' || COALESCE(m.tool_text, '')) ILIKE '%'||t.term||'%') m
UNION ALL SELECT 'D2048', t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.dc2 m WHERE left(m.content, 2048) ILIKE '%'||t.term||'%' OR (length(m.content) > 2048 AND m.content ILIKE '%'||t.term||'%') OR m.tool_text ILIKE '%'||t.term||'%') m
UNION ALL SELECT 'D8192', t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.dc8 m WHERE left(m.content, 8192) ILIKE '%'||t.term||'%' OR (length(m.content) > 8192 AND m.content ILIKE '%'||t.term||'%') OR m.tool_text ILIKE '%'||t.term||'%') m
UNION ALL SELECT 'D2048-no-recheck', t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.dc2 m WHERE left(m.content, 2048) ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') m
UNION ALL SELECT 'D8192-no-recheck', t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.dc8 m WHERE left(m.content, 8192) ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') m
UNION ALL SELECT 'seqscan', t.term, m.id FROM terms t, LATERAL (SELECT id FROM trgm_exp.d0 m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') m;
SELECT r.v, r.term, count(*) AS rows,
  (SELECT count(*) FROM ((SELECT id FROM res WHERE v='seqscan' AND term=r.term) EXCEPT (SELECT id FROM res x WHERE x.v=r.v AND x.term=r.term)) e) AS missing_vs_seqscan,
  (SELECT count(*) FROM ((SELECT id FROM res x WHERE x.v=r.v AND x.term=r.term) EXCEPT (SELECT id FROM res WHERE v='seqscan' AND term=r.term)) e) AS extra_vs_seqscan
FROM res r GROUP BY 1,2 ORDER BY 2,1;
