# usage: genq.sh schema-prefix "label:table:shape ..." ; shape a = engine's (content OR tool_text), b = one expression
sel="SELECT m.id, m.session_id, m.role, COALESCE(m.tool_name, ''), m.created_at, s.source, COALESCE(s.model, ''), s.started_at, m.content, COALESCE(m.tool_text, '')"
for cls in ${CLASSES:-"substring:ubernete" "cjk:設定ファイル" "rare-sub:orakit" "miss:zzqxjv"} $EXTRA; do
  c=${cls%%:*}; term=${cls#*:}
  for v in $VARIANTS; do
    IFS=: read label table shape <<<"$v"
    case $shape in
      a) match="(m.content ILIKE '%$term%' OR m.tool_text ILIKE '%$term%')";;
      b) match="(m.content || E'\\n' || COALESCE(m.tool_text, '')) ILIKE '%$term%'";;
      d*) N=${shape#d}; match="(left(m.content, $N) ILIKE '%$term%' OR (length(m.content) > $N AND m.content ILIKE '%$term%') OR m.tool_text ILIKE '%$term%')";;
    esac
    printf '%s\t%s\t%s FROM %s m JOIN trgm_exp.sessions s ON s.id = m.session_id WHERE m.state <> '"'rewound'"' AND s.hidden = 0 AND %s ORDER BY m.id DESC LIMIT 20 OFFSET 0\n' "$label" "$c" "$sel" "$table" "$match"
  done
done
