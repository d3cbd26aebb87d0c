#!/usr/bin/env python3
"""The events 'imexctl monitor --json' recorded, for one domain (guest side).

  monitor-seq.py next FILE POSFILE DOMAIN new|ready|degraded|deleted [MEMBER]
      exit 0 once an event of DOMAIN after the one matched last (POSFILE)
      is the one asked for (degraded with MEMBER: that member is listed
      not connected, with a reason); 1 if it has not come yet
  monitor-seq.py check FILE DOMAIN MEMBER
      the whole record of DOMAIN is, in order: created, READY, DEGRADED
      with MEMBER's reason, READY again, deleted; every line is one JSON
      object with a time; prints the sequence
"""
import json
import sys


def events(path, domain):
    out = []
    with open(path) as f:
        for n, line in enumerate(f):
            if not line.endswith("\n"):
                break  # being written
            e = json.loads(line)
            assert "time" in e and "time_ms" in e and "event" in e, line
            if e.get("domain") == domain:
                out.append((n, e))
    return out


def member_reason(e, member):
    for m in e.get("members", []):
        if m["name"] == member and m["state"] != "connected" and m.get("reason"):
            return m
    return None


def matches(e, want, member):
    kind, state = e["event"], e.get("state")
    if want == "new":
        return kind == "domain-new"
    if want == "deleted":
        return kind == "domain-del"
    if kind not in ("domain-new", "domain-status") or state != want:
        return False
    return want != "degraded" or not member or member_reason(e, member)


def describe(e):
    s = e["event"]
    if e.get("state"):
        s += " " + e["state"]
    for m in e.get("members", []):
        s += " [%s %s: %s]" % (m["name"], m["state"], m.get("reason"))
    return s


def cmd_next(path, posfile, domain, want, member=None):
    try:
        pos = int(open(posfile).read())
    except (OSError, ValueError):
        pos = -1
    for n, e in events(path, domain):
        if n > pos and matches(e, want, member):
            open(posfile, "w").write("%d\n" % n)
            print("line %d: %s" % (n + 1, describe(e)))
            return 0
    return 1


def cmd_check(path, domain, member):
    every = [e for _, e in events(path, domain)]
    for e in every:
        print("  %s %s" % (e["time"], describe(e)))
    times = [e["time_ms"] for e in every]
    assert times == sorted(times), "times go backwards"
    # Its channels' and requests' events come and go around it: the
    # sequence is that of the domain's own events.
    evs = [e for e in every if e["event"].startswith("domain-")]
    assert evs and evs[0]["event"] == "domain-new", "not created first"
    assert evs[-1]["event"] == "domain-del", "not deleted last"
    assert all(e["event"] != "domain-del" for e in evs[:-1]), "deleted twice"
    states = []
    for e in evs[:-1]:
        if e["event"] in ("domain-new", "domain-status"):
            if not states or states[-1] != e["state"]:
                states.append(e["state"])
    # Before every member has connected a new domain may pass through
    # DEGRADED: the sequence starts at its first READY.
    assert "ready" in states, "never READY: %s" % states
    states = states[states.index("ready"):]
    assert states == ["ready", "degraded", "ready"], \
        "states %s, not ready, degraded, ready" % states
    lost = [e for e in evs if e["event"] == "domain-status"
            and e.get("state") == "degraded" and member_reason(e, member)]
    assert lost, "no DEGRADED event says why %s is not connected" % member
    m = member_reason(lost[0], member)
    print("%s: created, ready, degraded (%s %s: %s), ready, deleted" %
          (domain, member, m["state"], m["reason"]))
    return 0


def main(argv):
    if len(argv) >= 6 and argv[1] == "next":
        return cmd_next(*argv[2:7])
    if len(argv) == 5 and argv[1] == "check":
        try:
            return cmd_check(*argv[2:5])
        except AssertionError as err:
            print("monitor-seq: %s: %s" % (argv[3], err), file=sys.stderr)
            return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
