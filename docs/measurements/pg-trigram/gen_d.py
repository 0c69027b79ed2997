# Long "tool output" rows for the length-cap corpus: chunks of 1-16 KB cut from
# real files (Go sources, Go docs, and CJK/other text from x/text testdata),
# plus tool_text (a call's name, a newline, JSON arguments) for some short rows.
import os, random, json
random.seed(42)
N = 100000
gofiles = []
for root, dirs, files in os.walk('/usr/local/go/src'):
    for f in files:
        if f.endswith('.go') and os.path.getsize(os.path.join(root, f)) > 20000:
            gofiles.append(os.path.join(root, f))
gofiles.sort()
docs = [os.path.join('/usr/local/go/doc', f) for f in sorted(os.listdir('/usr/local/go/doc')) if os.path.isfile(os.path.join('/usr/local/go/doc', f))]
td = '/root/go/pkg/mod/golang.org/x/text@v0.44.0/encoding/testdata/'
cjk = [td + f for f in ['rashomon-utf-8.txt', 'sunzi-bingfa-simplified-utf-8.txt', 'sunzi-bingfa-traditional-utf-8.txt', 'unsu-joh-eun-nal-utf-8.txt']]
cache = {}
def text(p):
    if p not in cache:
        cache[p] = open(p, encoding='utf-8', errors='replace').read().replace('\x00', ' ')
    return cache[p]
def esc(s):
    return s.replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n').replace('\r', '\\r')
ids = list(range(1, N + 1))
long_ids = set(random.sample(ids, N // 5))
src_kind = {'go': 0, 'doc': 0, 'cjk': 0}
with open('/tmp/trgm/d/long.tsv', 'w', encoding='utf-8') as out, open('/tmp/trgm/d/tool.tsv', 'w', encoding='utf-8') as tout:
    for i in ids:
        if i in long_ids:
            r = random.random()
            if r < 0.08:
                p = random.choice(cjk); src_kind['cjk'] += 1
            elif r < 0.15 and docs:
                p = random.choice(docs); src_kind['doc'] += 1
            else:
                p = random.choice(gofiles); src_kind['go'] += 1
            t = text(p)
            n = random.randint(1024, 16384)  # characters (CJK: ~3 bytes each)
            if len(t) <= n:
                chunk = t
            else:
                s = random.randint(0, len(t) - n)
                chunk = t[s:s + n]
            out.write(f"{i}\t{esc(chunk)}\n")
        elif random.random() < 0.15:
            p = random.choice(gofiles)
            lines = [l.strip() for l in text(p).splitlines() if l.strip()]
            if random.random() < 0.5:
                tt = 'read_file\n' + json.dumps({'path': p})
            else:
                tt = 'bash\n' + json.dumps({'command': 'grep -n ' + json.dumps(random.choice(lines)[:80]) + ' ' + p})
            tout.write(f"{i}\t{esc(tt)}\n")
print(src_kind, len(gofiles), len(docs))
