#!/usr/bin/env python3
"""Scrape the node exporter and compare imexd's metrics with imexctl --json.

  metrics-match.py URL IMEXCTL [NAME=VALUE...]

Exit 0 when, at this moment, the scraped series (over HTTP, as Prometheus
sees them) say what `imexctl --json node show / domain list / domain show`
say: domains by state, channels granted and free, each domain's channels
and members by state; plus each NAME=VALUE given (a series written as in
the exposition, e.g. 'imex_raft_role{role="leader"}=1'), and the textfile
collector parsed the file without error.  Else exit 1 with the differences
on stderr (the caller polls with a deadline: the file is rewritten within
a second of a change).  NAME=absent: no such series.
"""
import json
import re
import subprocess
import sys
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$')


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    series = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if m:
            series[m.group(1)] = float(m.group(2))
    return series


def imexctl(tool, *args):
    out = subprocess.run([tool, '--json'] + list(args), check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    url, tool = sys.argv[1], sys.argv[2]
    extra = sys.argv[3:]
    got = scrape(url)
    node = imexctl(tool, 'node', 'show')
    doms = [imexctl(tool, 'domain', 'show', d['name'])
            for d in imexctl(tool, 'domain', 'list')]
    want = {}
    for st in ('down', 'ready', 'degraded'):
        want['imex_domains{state="%s"}' % st] = sum(d['state'] == st for d in doms)
    granted = sum(d['channel_count'] for d in doms)
    want['imex_channels{state="granted"}'] = granted
    want['imex_channels{state="free"}'] = node['max_channels'] - granted
    for d in doms:
        want['imex_domain_channels{domain="%s"}' % d['name']] = d['channel_count']
        states = {}
        for m in d['members']:
            states[m['state']] = states.get(m['state'], 0) + 1
        for st, n in states.items():
            want['imex_domain_members{domain="%s",state="%s"}' % (d['name'], st)] = n
    want['node_textfile_scrape_error'] = 0
    absent = []
    for e in extra:
        k, v = e.rsplit('=', 1)
        if v == 'absent':
            absent.append(k)
        else:
            want[k] = float(v)
    bad = ['%s: scraped %s, expected %s' % (k, got.get(k, 'nothing'), v)
           for k, v in sorted(want.items()) if got.get(k) != v]
    # No series for a domain imexctl does not list.
    names = {d['name'] for d in doms}
    for k in got:
        m = re.match(r'imex_domain_(?:channels|members)\{domain="([^"]*)"', k)
        if m and m.group(1) not in names:
            bad.append('%s: scraped, but imexctl lists no domain %s' % (k, m.group(1)))
    bad += ['%s: scraped %s, expected none' % (k, got[k]) for k in absent if k in got]
    if bad:
        sys.stderr.write('\n'.join(bad) + '\n')
        return 1
    print('match: %d series as imexctl says (%d domains, %d channels granted)'
          % (len(want), len(doms), granted))
    return 0


if __name__ == '__main__':
    sys.exit(main())
