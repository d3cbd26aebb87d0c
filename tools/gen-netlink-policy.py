#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Make kmod/netlink-policy.[ch] from Documentation/netlink/imex.yaml.

Each operation with a do or dump gets a request policy that lists the
attributes its request (do and dump together) takes, with the spec's checks.
The table spans the whole set (maxattr IMEX_A_MAX): every other attribute
is NLA_UNSPEC, which strict validation refuses ("Unsupported attribute",
EINVAL, the offending attribute's offset in the extended ack), so a command
refuses what it does not use, whatever its type.  Operations taking the same attributes
share one table (the others are #defines of it).  The nested sets (members,
channels) get one policy each.  The generated C file also asserts, at build
time, that the spec's constants, enumerations, attributes and commands have
the values of include/uapi/linux/imex.h.

  gen-netlink-policy.py            write kmod/netlink-policy.[ch]
  gen-netlink-policy.py --check    exit 1 if they are stale, or if the
                                   operation table of kmod/netlink.c does
                                   not match the spec (command, policy,
                                   admin permission)

The subset of YNL it reads: genetlink-c name-prefix / attr-max-name,
attribute types string, binary, u32, u64, pad, nest and indexed-array of
nests, checks min, max, min-len, max-len, exact-len (integers).
"""
import os
import re
import sys
import textwrap

import yaml

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
SPEC = 'Documentation/netlink/imex.yaml'
OUT_C = 'kmod/netlink-policy.c'
OUT_H = 'kmod/netlink-policy.h'
OPS_C = 'kmod/netlink.c'


def die(msg):
    sys.stderr.write('gen-netlink-policy: %s\n' % msg)
    sys.exit(2)


def c_name(prefix, name):
    return (prefix + name).upper().replace('-', '_')


def c_ident(name):
    return name.replace('-', '_')


class Spec:
    def __init__(self, path):
        with open(path) as f:
            self.y = yaml.safe_load(f)
        self.family = self.y['name']
        self.sets = {}
        for s in self.y['attribute-sets']:
            attrs, val = [], 1
            for a in s['attributes']:
                val = a.get('value', val)
                attrs.append((a, val))
                val += 1
            self.sets[s['name']] = {
                'prefix': s['name-prefix'],
                'max': c_name('', s['attr-max-name']),
                'attrs': attrs,
            }
        self.ops = self.y['operations']['list']
        self.op_prefix = self.y['operations']['name-prefix']

    def attr(self, set_name, name):
        for a, val in self.sets[set_name]['attrs']:
            if a['name'] == name:
                return a, val
        die('attribute %s is not in set %s' % (name, set_name))
        return None

    def policy_name(self, set_name):
        return '%s_%s_nl_policy' % (self.family, c_ident(set_name))


def fits_s16(v):
    return -32768 <= v <= 32767


def entry(spec, set_name, a, ranges):
    """The policy initializer of attribute @a (a dict of the spec)."""
    t = a['type']
    chk = a.get('checks', {})
    for k in chk:
        if k not in ('min', 'max', 'min-len', 'max-len', 'exact-len'):
            die('%s: check %s is not supported' % (a['name'], k))
    if t == 'string':
        if 'max-len' in chk:
            return '{ .type = NLA_NUL_STRING, .len = %d }' % chk['max-len']
        return '{ .type = NLA_NUL_STRING }'
    if t == 'binary':
        if 'exact-len' in chk:
            return 'NLA_POLICY_EXACT_LEN(%d)' % chk['exact-len']
        if 'min-len' in chk:
            return 'NLA_POLICY_RANGE(NLA_BINARY, %d, %d)' % (chk['min-len'], chk['max-len'])
        if 'max-len' in chk:
            return '{ .type = NLA_BINARY, .len = %d }' % chk['max-len']
        return '{ .type = NLA_BINARY }'
    if t in ('u32', 'u64'):
        nt = 'NLA_' + t.upper()
        lo, hi = chk.get('min'), chk.get('max')
        if lo is None and hi is None:
            return '{ .type = %s }' % nt
        if (lo is None or fits_s16(lo)) and (hi is None or fits_s16(hi)):
            if lo is None:
                return 'NLA_POLICY_MAX(%s, %d)' % (nt, hi)
            if hi is None:
                return 'NLA_POLICY_MIN(%s, %d)' % (nt, lo)
            return 'NLA_POLICY_RANGE(%s, %d, %d)' % (nt, lo, hi)
        rname = '%s_%s_range' % (spec.family, c_ident(a['name']))
        ranges[rname] = (lo if lo is not None else 0,
                         hi if hi is not None else (1 << int(t[1:])) - 1)
        return 'NLA_POLICY_FULL_RANGE(%s, &%s)' % (nt, rname)
    if t == 'indexed-array' and a.get('sub-type') == 'nest':
        return 'NLA_POLICY_NESTED_ARRAY(%s)' % spec.policy_name(a['nested-attributes'])
    if t == 'nest':
        return 'NLA_POLICY_NESTED(%s)' % spec.policy_name(a['nested-attributes'])
    if t == 'pad':
        # Alignment padding of a reply's u64s; never in a request.
        return '{ .type = NLA_REJECT }'
    die('%s: type %s is not supported' % (a['name'], t))
    return None


def request_attrs(op):
    """Attributes of @op's requests: its do and its dump together."""
    names = []
    for kind in ('do', 'dump'):
        req = (op.get(kind) or {}).get('request') or {}
        for n in req.get('attributes', []):
            if n not in names:
                names.append(n)
    return names


def has_request(op):
    return 'do' in op or 'dump' in op


def generate(spec):
    ranges = {}
    body = []
    hdr = []
    top = spec.y['attribute-sets'][0]['name']
    nested = [s['name'] for s in spec.y['attribute-sets'][1:]]

    # Nested sets: every attribute of the set.
    for sname in nested:
        s = spec.sets[sname]
        pname = spec.policy_name(sname)
        decl = 'const struct nla_policy %s[%s + 1]' % (pname, s['max'])
        hdr.append('extern %s;' % decl)
        body.append('%s = {' % decl)
        for a, _ in s['attrs']:
            body.append('\t[%s] = %s,' % (c_name(s['prefix'], a['name']),
                                          entry(spec, sname, a, ranges)))
        body.append('};')
        body.append('')

    # One table per distinct set of request attributes.
    s = spec.sets[top]
    tables = {}         # frozenset of names -> policy name
    aliases = []
    for op in spec.ops:
        if not has_request(op):
            continue
        if op.get('attribute-set', top) != top:
            die('%s: only the %s set has requests' % (op['name'], top))
        names = request_attrs(op)
        for n in names:
            spec.attr(top, n)
        pname = '%s_%s_nl_policy' % (spec.family, c_ident(op['name']))
        key = frozenset(names)
        if key in tables:
            aliases.append('#define %s %s' % (pname, tables[key]))
            continue
        tables[key] = pname
        users = [o['name'] for o in spec.ops
                 if has_request(o) and frozenset(request_attrs(o)) == key]
        decl = 'const struct nla_policy %s[%s + 1]' % (pname, s['max'])
        hdr.append('extern %s;' % decl)
        text = '%s: %s' % (', '.join(users), ', '.join(names) if names else 'no attributes')
        lines = textwrap.wrap(text, 75, break_on_hyphens=False)
        if len(lines) == 1:
            body.append('/* %s */' % lines[0])
        else:
            body.append('/*')
            body += [' * ' + ln for ln in lines]
            body.append(' */')
        body.append('%s = {' % decl)
        for a, _ in s['attrs']:
            if a['name'] in names:
                body.append('\t[%s] = %s,' % (c_name(s['prefix'], a['name']),
                                              entry(spec, top, a, ranges)))
        body.append('};')
        body.append('')

    # The spec's values are the uAPI's.
    asserts = []
    for d in spec.y.get('definitions', []):
        if d['type'] == 'const':
            asserts.append('static_assert(%s == %d);' % (c_name(spec.family + '-', d['name']),
                                                         d['value']))
        elif d['type'] == 'enum':
            v = d.get('value-start', 0)
            for e in d['entries']:
                en = e if isinstance(e, str) else e['name']
                asserts.append('static_assert(%s == %d);' % (c_name(d['name-prefix'], en), v))
                v += 1
    for sname in [top] + nested:
        st = spec.sets[sname]
        for a, val in st['attrs']:
            asserts.append('static_assert(%s == %d);' % (c_name(st['prefix'], a['name']), val))
        asserts.append('static_assert(%s == %d);' % (st['max'], st['attrs'][-1][1]))
    for op in spec.ops:
        asserts.append('static_assert(%s == %d);' % (c_name(spec.op_prefix, op['name']),
                                                     op['value']))

    gen = ('Generated by tools/gen-netlink-policy.py from %s:\n'
           ' * do not edit; edit the spec and run "make -C kmod policy".' % SPEC)
    h = ['/* SPDX-License-Identifier: GPL-2.0 */',
         '/*',
         ' * ' + gen,
         ' *',
         ' * Request policies of the "%s" family, one per operation.' % spec.family,
         ' */',
         '#ifndef _IMEX_NETLINK_POLICY_H',
         '#define _IMEX_NETLINK_POLICY_H',
         '',
         '#include <net/netlink.h>',
         '#include <linux/imex.h>',
         '',
         '/*',
         ' * Each spans the whole set: an attribute the operation does not take is',
         ' * NLA_UNSPEC, refused by strict validation ("Unsupported attribute").',
         ' */']
    h += hdr
    h += ['', '/* Operations that take the same attributes share a table. */']
    h += aliases
    h += ['', '#endif /* _IMEX_NETLINK_POLICY_H */', '']

    c = ['// SPDX-License-Identifier: GPL-2.0',
         '/*',
         ' * ' + gen,
         ' */',
         '#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt',
         '',
         '#include <linux/build_bug.h>',
         '#include "netlink-policy.h"',
         '',
         '/* The spec\'s constants, enumerations, attributes and commands are the uAPI\'s. */']
    c += asserts
    c.append('')
    if ranges:
        c.append('/* Not const: 6.1 declares the range pointer of a policy without it. */')
        for rname, (lo, hi) in ranges.items():
            c.append('static struct netlink_range_validation %s = {' % rname)
            c.append('\t.min = %d,' % lo)
            c.append('\t.max = %d,' % hi)
            c.append('};')
            c.append('')
    c += body
    while c[-1] == '':
        c.pop()
    c.append('')
    return '\n'.join(h), '\n'.join(c)


def check_ops_table(spec, path):
    """kmod/netlink.c's imex_ops[]: one entry per operation with a request,
    with its policy and IMEX_ADMIN exactly where the spec says admin-perm."""
    with open(path) as f:
        text = f.read()
    m = re.search(r'struct genl_ops imex_ops\[\] = \{(.*?)\n\};', text, re.S)
    if not m:
        return ['%s: no imex_ops[] table' % path]
    errs = []
    seen = {}
    for blk in re.findall(r'\{([^{}]*)\}', m.group(1)):
        cm = re.search(r'\.cmd\s*=\s*(\w+)', blk)
        if not cm:
            continue
        pm = re.search(r'\.policy\s*=\s*(\w+)', blk)
        mx = re.search(r'\.maxattr\s*=\s*(\w+)', blk)
        seen[cm.group(1)] = (pm.group(1) if pm else None, mx.group(1) if mx else None,
                             'IMEX_ADMIN' in blk or 'GENL_ADMIN_PERM' in blk)
    top = spec.y['attribute-sets'][0]['name']
    for op in spec.ops:
        cmd = c_name(spec.op_prefix, op['name'])
        if not has_request(op):
            if cmd in seen:
                errs.append('%s is a notification in the spec but has an operation' % cmd)
            continue
        if cmd not in seen:
            errs.append('%s has no entry in imex_ops[]' % cmd)
            continue
        pol, mx, admin = seen.pop(cmd)
        want = '%s_%s_nl_policy' % (spec.family, c_ident(op['name']))
        if pol != want:
            errs.append('%s: policy %s, the spec\'s is %s' % (cmd, pol, want))
        if mx != spec.sets[top]['max']:
            errs.append('%s: maxattr %s, not %s' % (cmd, mx, spec.sets[top]['max']))
        if admin != ('admin-perm' in op.get('flags', [])):
            errs.append('%s: admin permission %s in netlink.c, %s in the spec' %
                        (cmd, admin, not admin))
    for cmd in seen:
        errs.append('%s is in imex_ops[] but not an operation of the spec' % cmd)
    return ['%s: %s' % (path, e) for e in errs]


def main():
    check = sys.argv[1:] == ['--check']
    if sys.argv[1:] and not check:
        die('usage: gen-netlink-policy.py [--check]')
    os.chdir(TOP)
    spec = Spec(SPEC)
    h, c = generate(spec)
    if not check:
        for path, text in ((OUT_H, h), (OUT_C, c)):
            with open(path, 'w') as f:
                f.write(text)
        return 0
    errs = []
    for path, text in ((OUT_H, h), (OUT_C, c)):
        try:
            with open(path) as f:
                cur = f.read()
        except OSError:
            cur = None
        if cur != text:
            errs.append('%s is not what %s makes: run "make -C kmod policy"' % (path, SPEC))
    errs += check_ops_table(spec, OPS_C)
    for e in errs:
        sys.stderr.write('gen-netlink-policy: %s\n' % e)
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main())
