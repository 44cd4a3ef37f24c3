#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of tcprt's Grafana dashboards (grafana/*.json), for tests/grafana.sh:

    grafana_check.py structure FILE...
        Grafana's import format: schema 39, the ${DS_PROMETHEUS} input and
        every panel's, target's and variable's data source set to it, the
        port, role and container variables (label_values queries), unique
        panel ids, positions inside the 24 columns, no undefined variable.
    grafana_check.py prometheus FILE sink_metrics.c prom.c HELP
        Every metric an expression names is one sink_metrics.c's tables or
        its fixed lines write (and HELP, `tcprt export --help`, lists the
        same names); every metric export writes is on the dashboard; every
        label is one export or prom.c writes, or one a scrape adds.
    grafana_check.py otlp FILE make-dashboards.py
        The same against the generator's OTLP table.
    grafana_check.py rules FILE...
        A Prometheus rules file (for promtool check rules): one recording
        rule per expression, Grafana's variables set to All.
    grafana_check.py absent FILE TEXTFILE DIR
        DIR/rules.yml and DIR/test.yml for promtool test rules: every
        expression of FILE, evaluated over the series of TEXTFILE (a file
        tcprt export wrote, each value the step of a counter growing that
        much a minute), must return something (absent() of it fires no
        alert).

Every expression: brackets balanced outside strings, only known functions.
Prints what is wrong and exits 1.
"""
import importlib.util
import json
import re
import sys

DS = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
# Grafana's variables the dashboards may use besides their own
BUILTIN_VARS = {"__rate_interval", "__interval", "__range"}
FUNCS = {"sum", "rate", "increase", "histogram_quantile", "count", "avg",
         "max", "min", "irate", "delta", "absent", "clamp_min"}
MODIFIERS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = MODIFIERS | {"and", "or", "unless", "bool", "offset"}
# labels Prometheus adds at scrape time
SCRAPE_LABELS = {"instance", "job"}
HIST_SUFFIXES = ("_bucket", "_sum", "_count")

errors = []


def err(msg):
    errors.append(msg)


def load(path):
    with open(path) as f:
        return json.load(f)


def all_panels(d):
    for p in d["panels"]:
        yield p
        for q in p.get("panels", []):
            yield q


def expressions(d):
    """(where, PromQL) of every target and every variable's query; a
    label_values(SELECTOR, LABEL) query gives SELECTOR, and LABEL apart"""
    for p in all_panels(d):
        for t in p.get("targets", []):
            yield "panel %r %s" % (p["title"], t["refId"]), t["expr"]
    for v in d["templating"]["list"]:
        m = re.fullmatch(r"label_values\((.*), *([a-zA-Z_]\w*)\)", v["definition"])
        if m:
            yield "variable %s" % v["name"], m.group(1)


def variable_labels(d):
    for v in d["templating"]["list"]:
        m = re.fullmatch(r"label_values\((.*), *([a-zA-Z_]\w*)\)", v["definition"])
        if m:
            yield "variable %s" % v["name"], m.group(2)


def concrete(expr):
    """Grafana's variables as at All: $__rate_interval 5m, the others .*"""
    expr = re.sub(r"\$(__rate_interval|__interval|\{__rate_interval\})", "5m", expr)
    expr = expr.replace("$__range", "1h")
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<num>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?[a-zA-Z]*)
  | (?P<id>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|>=|<=|[-+*/%^=<>])
  | (?P<p>[(){}\[\],])
""", re.X)


def lex(expr):
    toks, i = [], 0
    while i < len(expr):
        m = TOKEN.match(expr, i)
        if not m:
            raise ValueError("cannot read %r at %d" % (expr[i:i + 10], i))
        if m.lastgroup != "space":
            toks.append((m.lastgroup, m.group()))
        i = m.end()
    return toks


def analyse(where, expr):
    """(metric names, label names) of expr; its faults are err()ed"""
    metrics, labels = set(), set()
    try:
        toks = lex(expr)
    except ValueError as e:
        err("%s: %s: %s" % (where, e, expr))
        return metrics, labels
    stack = []
    pairs = {")": "(", "}": "{", "]": "["}
    for k, t in toks:
        if k != "p" or t == ",":
            continue
        if t in "({[":
            stack.append(t)
        elif not stack or stack.pop() != pairs[t]:
            err("%s: unbalanced %r: %s" % (where, t, expr))
            return metrics, labels
    if stack:
        err("%s: %r not closed: %s" % (where, "".join(stack), expr))
        return metrics, labels
    depth = {"{": 0, "[": 0}
    label_list = False	# inside by (...) and its kin
    for i, (k, t) in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else (None, None)
        if k == "p":
            if t in "{[":
                depth[t] += 1
            elif t in "}]":
                depth["{" if t == "}" else "["] -= 1
            elif t == ")":
                label_list = False
            continue
        if k != "id" or depth["["]:
            continue
        if depth["{"]:
            if nxt[0] != "op" or nxt[1] not in ("=", "!=", "=~", "!~"):
                err("%s: %r is no label matcher: %s" % (where, t, expr))
            labels.add(t)
        elif label_list:
            labels.add(t)
        elif t in MODIFIERS:
            if nxt[1] != "(":
                err("%s: %s without its label list: %s" % (where, t, expr))
            label_list = True
            # the next "(" opens the list: skip it
        elif t in KEYWORDS:
            pass
        elif nxt[1] == "(" or (t in FUNCS and nxt[1] in ("by", "without")):
            if t not in FUNCS:
                err("%s: unknown function %s: %s" % (where, t, expr))
        else:
            metrics.add(t)
    return metrics, labels


def dashboard_names(d):
    """metrics and labels of every expression, by where"""
    out = []
    for where, e in expressions(d):
        m, l = analyse(where, concrete(e))
        out.append((where, m, l))
    for where, l in variable_labels(d):
        out.append((where, set(), {l}))
    return out


def structure(path):
    d = load(path)
    if d.get("schemaVersion") != 39:
        err("%s: schemaVersion %r, not 39" % (path, d.get("schemaVersion")))
    ins = d.get("__inputs", [])
    if not any(i.get("name") == "DS_PROMETHEUS" and i.get("type") == "datasource"
               and i.get("pluginId") == "prometheus" for i in ins):
        err("%s: no DS_PROMETHEUS data source input" % path)
    if d.get("id") is not None or not d.get("uid") or len(d["uid"]) > 40:
        err("%s: id must be null, uid 1..40 characters" % path)
    vs = {v["name"]: v for v in d["templating"]["list"]}
    for name in ("port", "role", "container"):
        v = vs.get(name)
        if not v or v["type"] != "query" or not v["definition"].startswith("label_values("):
            err("%s: no query variable %s from label_values" % (path, name))
    for v in vs.values():
        if v.get("datasource") != DS:
            err("%s: variable %s: data source %r" % (path, v["name"], v.get("datasource")))
        if v["query"]["query"] != v["definition"]:
            err("%s: variable %s: query and definition differ" % (path, v["name"]))
    ids = set()
    for p in all_panels(d):
        if p["id"] in ids:
            err("%s: panel id %d twice" % (path, p["id"]))
        ids.add(p["id"])
        g = p["gridPos"]
        if g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24 or g["y"] < 0 or g["h"] < 1:
            err("%s: panel %r outside the grid: %r" % (path, p["title"], g))
        if p.get("repeat") and p["repeat"] not in vs:
            err("%s: panel %r repeats undefined $%s" % (path, p["title"], p["repeat"]))
        if p["type"] == "row":
            continue
        if p.get("datasource") != DS:
            err("%s: panel %r: data source %r" % (path, p["title"], p.get("datasource")))
        if not p.get("targets"):
            err("%s: panel %r has no query" % (path, p["title"]))
        for t in p.get("targets", []):
            if t.get("datasource") != DS:
                err("%s: panel %r %s: data source %r" % (path, p["title"], t["refId"],
                                                         t.get("datasource")))
    for where, e in list(expressions(d)) + [("title", p["title"]) for p in all_panels(d)]:
        for v in re.findall(r"\$\{?(\w+)\}?", e):
            if v not in vs and v not in BUILTIN_VARS:
                err("%s: %s: undefined variable $%s" % (path, where, v))


def block(src, start):
    """the text of the initialiser of the C array whose declaration
    contains start"""
    i = src.index(start)
    i = src.index("{", src.index("=", i))
    depth = 0
    for j in range(i, len(src)):
        depth += {"{": 1, "}": -1}.get(src[j], 0)
        if depth == 0:
            return src[i:j + 1]
    raise ValueError("%s: no end" % start)


def export_names(sink_metrics_c, prom_c, help_path):
    """(counters and gauges, histograms, labels) tcprt export writes, from
    its source; HELP must list the same names"""
    with open(sink_metrics_c) as f:
        src = f.read()
    with open(prom_c) as f:
        psrc = f.read()
    counters = set(re.findall(r'\{\s*"(tcprt_\w+)"', block(src, "} counters[]")))
    hists = set(re.findall(r'\]\s*=\s*\{\s*"(tcprt_\w+)"', block(src, "} histograms[NHIST]")))
    # written whole, or as status_gauge()'s name
    fixed = set(re.findall(r"# TYPE (tcprt_\w+) (?:counter|gauge)", src)) | \
        set(re.findall(r'status_gauge\(out, "(tcprt_\w+)"', src))
    if not counters or not hists or not fixed:
        err("%s: found no counters, histograms or fixed metrics" % sink_metrics_c)
    plain = counters | fixed
    with open(help_path) as f:
        helped = set(re.findall(r"^\s+(tcprt_\w+)", f.read(), re.M))
    if helped != plain | hists:
        err("export --help lists %s, sink_metrics.c writes %s" % (
            sorted(helped), sorted(plain | hists)))
    # label names in the format strings: name=\"...\"
    labels = set(re.findall(r'(\w+)=\\"', src)) | set(re.findall(r'(\w+)=\\"', psrc))
    return plain, hists, labels


def check_names(path, d, plain, hists, labels, require_all=True):
    allowed = set(plain) | {h + s for h in hists for s in HIST_SUFFIXES}
    used = set()
    for where, ms, ls in dashboard_names(d):
        for m in ms - allowed:
            err("%s: %s: metric %s is not one the exporter writes" % (path, where, m))
        for l in ls - labels:
            err("%s: %s: label %s is not one the series have" % (path, where, l))
        used |= ms
    for h in hists:
        if not any(h + s in used for s in HIST_SUFFIXES):
            used.discard(h)
        else:
            used.add(h)
    missing = (set(plain) | set(hists)) - used
    if require_all and missing:
        err("%s: no panel shows %s" % (path, ", ".join(sorted(missing))))
    return used


def prometheus(path, sink_metrics_c, prom_c, help_path):
    plain, hists, labels = export_names(sink_metrics_c, prom_c, help_path)
    for l in ("port", "role", "type", "container", "pod", "le", "key"):
        if l not in labels:
            err("%s: label %s not found in the source" % (sink_metrics_c, l))
    check_names(path, load(path), plain, hists, labels | SCRAPE_LABELS)


def generator(path):
    spec = importlib.util.spec_from_file_location("make_dashboards", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def otlp(path, gen_path):
    o = generator(gen_path).OTLP
    hist_keys = {"duration", "process", "upload", "download", "rq_wait", "app",
                 "sq_wait", "rwnd_limited", "sndbuf_limited", "app_limited"}
    plain, hists, labels = set(), set(), set(o["labels"].values())
    labels |= set(o.get("other_labels", [])) | {"le"} | SCRAPE_LABELS
    for k, v in o["metrics"].items():
        if v is None:
            continue
        (hists if k in hist_keys else plain).add(v[0])
        labels |= set(v[1])
    check_names(path, load(path), plain, hists, labels)


def yaml_str(s):
    """a YAML double-quoted scalar (JSON's string is one)"""
    return json.dumps(s)


def rules(paths):
    print("groups:")
    for path in paths:
        d = load(path)
        print("  - name: %s" % yaml_str(d["uid"]))
        print("    rules:")
        for i, (where, e) in enumerate(expressions(d), 1):
            print("      # %s" % where)
            print("      - record: dashboard:%s:expr_%d" % (d["uid"].replace("-", "_"), i))
            print("        expr: %s" % yaml_str(concrete(e)))


def absent(path, textfile, outdir):
    d = load(path)
    names = []
    with open(outdir + "/rules.yml", "w") as f:
        f.write("groups:\n  - name: absent\n    rules:\n")
        for i, (where, e) in enumerate(expressions(d), 1):
            name = "empty_%d" % i
            names.append(name)
            f.write("      - alert: %s\n        expr: %s\n        annotations:\n"
                    "          where: %s\n" % (name, yaml_str("absent(%s)" % concrete(e)),
                                               yaml_str(where)))
    series = []
    with open(textfile) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            s, v = line.rsplit(" ", 1)
            series.append((s, float(v)))
    if not series:
        err("%s: no series" % textfile)
    with open(outdir + "/test.yml", "w") as f:
        f.write("rule_files:\n  - rules.yml\nevaluation_interval: 1m\ntests:\n"
                "  - interval: 1m\n    input_series:\n")
        for s, v in series:
            # a counter growing v a minute, 31 samples
            f.write("      - series: %s\n        values: %s\n" % (
                yaml_str(s), yaml_str("0+%sx30" % repr(v))))
        f.write("    alert_rule_test:\n")
        for n in names:
            f.write("      - eval_time: 30m\n        alertname: %s\n"
                    "        exp_alerts: []\n" % n)


def main(argv):
    cmd, args = argv[0], argv[1:]
    if cmd == "structure":
        for p in args:
            structure(p)
    elif cmd == "prometheus":
        prometheus(*args)
    elif cmd == "otlp":
        otlp(*args)
    elif cmd == "rules":
        rules(args)
    elif cmd == "absent":
        absent(*args)
    else:
        sys.stderr.write(__doc__)
        return 2
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
