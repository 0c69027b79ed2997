SET max_parallel_workers_per_gather=0;
SELECT t.term,
 (SELECT count(*) FROM trgm_exp.ma m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') AS a_rows,
 (SELECT count(*) FROM trgm_exp.mb m WHERE (m.content || E'\n' || COALESCE(m.tool_text, '')) ILIKE '%'||t.term||'%') AS b_rows,
 (SELECT count(*) FROM trgm_exp.mp m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') AS p_rows,
 (SELECT count(*) FROM ((SELECT id FROM trgm_exp.ma m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%')
    EXCEPT (SELECT id FROM trgm_exp.mb m WHERE (m.content || E'\n' || COALESCE(m.tool_text, '')) ILIKE '%'||t.term||'%')) x) AS a_minus_b,
 (SELECT count(*) FROM ((SELECT id FROM trgm_exp.mb m WHERE (m.content || E'\n' || COALESCE(m.tool_text, '')) ILIKE '%'||t.term||'%')
    EXCEPT (SELECT id FROM trgm_exp.ma m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%')) x) AS b_minus_a,
 (SELECT count(*) FROM trgm_exp.m0 m WHERE m.content ILIKE '%'||t.term||'%' OR m.tool_text ILIKE '%'||t.term||'%') AS seqscan_rows
FROM (VALUES ('ubernete'), ('設定ファイル'), ('orakit'), ('zzqxjv')) t(term);
