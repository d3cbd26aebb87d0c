#!/usr/bin/python3
"""Watch 'imexctl domain show DOMAIN --json' (tests/imexd/vm/pair-guest.sh):
keep the first document in which MEMBER is lost (recovering or
disconnected) as OUT/lost.json and, with --refused, the first in which it
is refused as OUT/refused.json.  Stops when it has them all, or after
SECONDS.  Usage: reasons-watch.py DOMAIN MEMBER OUT SECONDS [--refused]"""
import json
import subprocess
import sys
import time

domain, member, out, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
want = {"lost": ("recovering", "disconnected")}
if "--refused" in sys.argv[5:]:
    want["refused"] = ("refused",)
end = time.monotonic() + secs
while want and time.monotonic() < end:
    r = subprocess.run(["tools/imexctl/imexctl", "domain", "show", domain, "--json"],
                       capture_output=True, text=True, check=False)
    if r.returncode == 0:
        doc = json.loads(r.stdout)
        for m in doc.get("members", []):
            if m["name"] != member:
                continue
            for name, states in list(want.items()):
                if m["state"] in states:
                    with open(f"{out}/{name}.json", "w", encoding="utf-8") as f:
                        f.write(r.stdout)
                    del want[name]
    time.sleep(0.05)
sys.exit(1 if want else 0)
