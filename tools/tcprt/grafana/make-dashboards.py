#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write tcprt's Grafana dashboards (schema 39, Dashboards -> Import):

    make-dashboards.py [--check] [DIR]

tcprt-prometheus.json reads the metrics `tcprt export` writes for
node_exporter's textfile collector (tools/tcprt/README, "Metrics for
Grafana"); tcprt-otlp.json the same panels over tcp_rt's OTLP metrics as a
Prometheus-compatible store names them with Prometheus naming (Prometheus
3's OTLP receiver, VictoriaMetrics -opentelemetry.usePrometheusNaming).
The names of both are in PROMETHEUS and OTLP below, nowhere else.

DIR is this script's folder unless given.  --check writes nothing: it
exits 1, naming the file, when a file in DIR differs from what it would
write.  Python 3's standard library only.
"""
import json
import os
import sys

# ---- the names ------------------------------------------------------------
#
# labels: the dashboard's variable -> the label it filters (host: the
# label telling one host's series from another's).  metrics: what the
# panels show -> (metric name, fixed label matchers).  A histogram is named
# by its base name: the panels add _bucket, _sum, _count.  A metric set to
# None leaves its panels out.

PROMETHEUS = {
    "file": "tcprt-prometheus.json",
    "uid": "tcprt-prometheus",
    "title": "tcprt: tcp_rt tasks (Prometheus textfile)",
    "what": "the metrics of `tcprt export` (node_exporter's textfile collector)",
    # instance: the node_exporter target the textfile was scraped from
    "labels": {"host": "instance", "port": "port", "role": "role",
               "type": "type", "container": "container"},
    "metrics": {
        "tasks": ("tcprt_tasks_total", {}),
        "failed": ("tcprt_failed_tasks_total", {}),
        "connections": ("tcprt_connections_total", {}),
        "sent": ("tcprt_sent_bytes_total", {}),
        "received": ("tcprt_received_bytes_total", {}),
        "retrans": ("tcprt_retransmissions_total", {}),
        "duration": ("tcprt_duration_seconds", {}),
        "process": ("tcprt_process_seconds", {}),
        "upload": ("tcprt_upload_seconds", {}),
        "download": ("tcprt_download_seconds", {}),
        "rq_wait": ("tcprt_rq_wait_seconds", {}),
        "app": ("tcprt_app_seconds", {}),
        "sq_wait": ("tcprt_sq_wait_seconds", {}),
        "rwnd_limited": ("tcprt_rwnd_limited_seconds", {}),
        "sndbuf_limited": ("tcprt_sndbuf_limited_seconds", {}),
        "app_limited": ("tcprt_app_limited_seconds", {}),
        "records_read": ("tcprt_records_read_total", {}),
        "malformed": ("tcprt_malformed_lines_total", {}),
        "overflow": ("tcprt_container_overflow_records_total", {}),
        "module_status": ("tcprt_module_status", {}),
        "agent_status": ("tcprt_agent_status", {}),
    },
    # tcprt_module_status's label naming the status line
    "status_key": "key",
}

OTLP = {
    "file": "tcprt-otlp.json",
    "uid": "tcprt-otlp",
    "title": "tcprt: tcp_rt tasks (OTLP, Prometheus naming)",
    "what": "tcp_rt's OTLP metrics, named by the store's Prometheus naming "
            "(Prometheus 3's OTLP receiver, VictoriaMetrics "
            "-opentelemetry.usePrometheusNaming)",
    # host_name: the resource attribute host.name (Prometheus: a label only
    # when prometheus.yml's otlp: promote_resource_attributes lists it)
    "labels": {"host": "host_name", "port": "server_port",
               "role": "tcp_rt_role", "type": "tcp_rt_task_type",
               "container": "tcp_rt_container"},
    # labels the series carry that no panel filters on (known to the test)
    "other_labels": ["container_id", "k8s_pod_uid"],
    "metrics": {
        "tasks": ("tcp_rt_tasks_total", {}),
        "failed": ("tcp_rt_task_failures_total", {}),
        "connections": ("tcp_rt_connections_total", {}),
        "sent": ("tcp_rt_io_bytes_total", {"network_io_direction": "transmit"}),
        "received": ("tcp_rt_io_bytes_total", {"network_io_direction": "receive"}),
        "retrans": ("tcp_rt_retransmissions_total", {}),
        "duration": ("tcp_rt_task_duration_seconds", {}),
        "process": ("tcp_rt_task_process_time_seconds", {}),
        "upload": ("tcp_rt_task_upload_time_seconds", {}),
        "download": ("tcp_rt_task_download_time_seconds", {}),
        "rq_wait": ("tcp_rt_task_rq_wait_seconds", {}),
        "app": ("tcp_rt_task_app_seconds", {}),
        "sq_wait": ("tcp_rt_task_sq_wait_seconds", {}),
        "rwnd_limited": ("tcp_rt_task_rwnd_limited_seconds", {}),
        "sndbuf_limited": ("tcp_rt_task_sndbuf_limited_seconds", {}),
        "app_limited": ("tcp_rt_task_app_limited_seconds", {}),
        # tcprt's own counters and tcp_rt's status are the textfile's only
        "records_read": None,
        "malformed": None,
        "overflow": None,
        "module_status": None,
        "agent_status": None,
    },
    "status_key": None,
}

FLAVOURS = (PROMETHEUS, OTLP)

# The breakdown's parts (log_ext), in the order they add up.
PROCESS_PARTS = ("rq_wait", "app", "sq_wait")
DOWNLOAD_PARTS = ("rwnd_limited", "sndbuf_limited", "app_limited")

# tcp_rt's status lines that count records lost or never made
# (docs/records.md, "The status file").
LOSS_KEYS = ("log_subbufs_overwritten", "log_records_overwritten",
             "reads_lapped", "alloc_failed", "probe_missed", "stats_dropped")
# tcprt agent's status lines that count what a sink did not deliver, by
# the ending of their keys (tcprt(8), [agent] status): metrics_textfile_
# failed, ship_refused, windows_late, ...
AGENT_LOSS_KEYS = ".+_(failed|dropped|capped|refused|late|future|overflow|skipped)"

DS = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
RATE = "$__rate_interval"
VARS = ("host", "port", "role", "container")


# ---- PromQL -----------------------------------------------------------------

def sel(f, what, suffix="", vars_=VARS, extra=None):
    """what's selector: its name (+ suffix), the variables' matchers, its
    fixed ones"""
    name, fixed = f["metrics"][what]
    m = ['%s=~"$%s"' % (f["labels"][v], v) for v in vars_]
    m += ['%s="%s"' % kv for kv in sorted(fixed.items())]
    m += ['%s="%s"' % kv for kv in sorted((extra or {}).items())]
    return "%s%s{%s}" % (name, suffix, ", ".join(m))


def rate_by(f, what, by, suffix=""):
    """sum by (by) (rate(what[$__rate_interval]))"""
    return "sum by (%s) (rate(%s[%s]))" % (", ".join(by), sel(f, what, suffix), RATE)


def quantile(f, q, what, by):
    return "histogram_quantile(%s, %s)" % (q, rate_by(f, what, list(by) + ["le"], "_bucket"))


def mean(f, what):
    """seconds per task: the rate of the sum over the rate of the count"""
    return "sum(rate(%s[%s])) / sum(rate(%s[%s]))" % (
        sel(f, what, "_sum"), RATE, sel(f, what, "_count"), RATE)


def legend(f, var):
    return "{{%s}}" % f["labels"][var]


# ---- Grafana ----------------------------------------------------------------

def target(expr, legend_, ref):
    return {"datasource": DS, "editorMode": "code", "expr": expr,
            "legendFormat": legend_, "range": True, "refId": ref}


def timeseries(title, desc, unit, targets, stack=False, overrides=None,
               w=12, h=8, **extra):
    p = {
        "type": "timeseries",
        "title": title,
        "description": desc,
        "datasource": DS,
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "min": None if overrides else 0,
                "custom": {
                    "drawStyle": "line",
                    "lineWidth": 1,
                    "fillOpacity": 60 if stack else 10,
                    "showPoints": "never",
                    "spanNulls": False,
                    "stacking": {"group": "A",
                                 "mode": "normal" if stack else "none"},
                },
            },
            "overrides": overrides or [],
        },
        "options": {
            "legend": {"calcs": ["mean", "max"], "displayMode": "table",
                       "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": [target(e, l, chr(ord("A") + i))
                    for i, (e, l) in enumerate(targets)],
        "gridPos": {"w": w, "h": h},
    }
    if p["fieldConfig"]["defaults"]["min"] is None:
        del p["fieldConfig"]["defaults"]["min"]
    p.update(extra)
    return p


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"w": 24, "h": 1}}


def variable(f, var, after):
    """a query variable: the values of var's label in the tasks' series,
    narrowed by the variables before it"""
    name = f["metrics"]["tasks"][0]
    if after:
        name = sel(f, "tasks", vars_=after)
    q = "label_values(%s, %s)" % (name, f["labels"][var])
    return {
        "type": "query",
        "name": var,
        "label": var,
        "datasource": DS,
        "definition": q,
        "query": {"query": q, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "refresh": 2,
        "regex": "",
        "sort": 3 if var == "port" else 1,
        "multi": True,
        "includeAll": True,
        # matches a series without the label too (no container label
        # without log_ext's netns or cgroup, or with --max-containers 0)
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "options": [],
        "hide": 0,
        "skipUrlSync": False,
    }


def status_panel(f, what, title, desc, keys):
    """the increase of a status gauge's lines whose key matches keys (a
    regular expression), per key and host"""
    name, key, host = f["metrics"][what][0], f["status_key"], f["labels"]["host"]
    return timeseries(
        title, desc, "short",
        [("sum by (%s, %s) (increase(%s{%s=~\"$host\", %s=~\"%s\"}[%s]))" % (
            host, key, name, host, key, keys, RATE),
          "{{%s}} {{%s}}" % (key, host))])


def panels(f):
    """the dashboard's rows and panels, in order"""
    L, M = f["labels"], f["metrics"]
    port = [L["port"]]
    out = []

    out.append(row("Tasks"))
    out.append(timeseries(
        "Requests/s per port",
        "Tasks completed per second (R W N P records: a request and its "
        "response), per service port.",
        "reqps", [(rate_by(f, "tasks", port), legend(f, "port"))]))
    out.append(timeseries(
        "Tasks/s by type",
        "R: server task completed; W: server connection closed with the "
        "response not all delivered; N: closed during the request; P: "
        "client task completed (docs/records.md).",
        "reqps", [(rate_by(f, "tasks", [L["type"]]), legend(f, "type"))],
        stack=True))
    out.append(timeseries(
        "Failure ratio per port",
        "Failed tasks (W: closed with the response unacknowledged, N: closed "
        "during the request) over all tasks.",
        "percentunit",
        [("%s / %s" % (rate_by(f, "failed", port), rate_by(f, "tasks", port)),
          legend(f, "port"))]))
    out.append(timeseries(
        "Connections closed/s per port",
        "Tracked connections that had a task, closed (E records).",
        "cps", [(rate_by(f, "connections", port), legend(f, "port"))]))

    out.append(row("Latency"))
    out.append(timeseries(
        "Duration p50 / p90 / p99 per port",
        "Task duration: first request byte to last response byte "
        "acknowledged (client: received).  histogram_quantile: within the "
        "bucket of the exact value (r10 buckets: < 28 %).",
        "s", [(quantile(f, q, "duration", port), "p%s %s" % (p, legend(f, "port")))
              for q, p in (("0.5", "50"), ("0.9", "90"), ("0.99", "99"))],
        w=24))
    out.append(timeseries(
        "Process time p99 per port",
        "Last request byte to first response byte: the server's think time "
        "(client: service time, request sent to first response byte).",
        "s", [(quantile(f, "0.99", "process", port), legend(f, "port"))]))
    out.append(timeseries(
        "Upload / download p99 per port",
        "Upload: first to last request byte.  Download: duration - upload - "
        "process (client: response time).",
        "s", [(quantile(f, "0.99", "upload", port), "upload %s" % legend(f, "port")),
              (quantile(f, "0.99", "download", port), "download %s" % legend(f, "port"))]))

    out.append(row("Network"))
    out.append(timeseries(
        "Throughput per port (sent up, received down)",
        "Bytes sent (R W P) and received (R N P) by the tasks, per second.",
        "Bps", [(rate_by(f, "sent", port), "sent %s" % legend(f, "port")),
                (rate_by(f, "received", port), "received %s" % legend(f, "port"))],
        overrides=[{"matcher": {"id": "byRegexp", "options": "/^received /"},
                    "properties": [{"id": "custom.transform",
                                    "value": "negative-Y"}]}]))
    out.append(timeseries(
        "Retransmissions/s per port",
        "Segments retransmitted during the tasks (R W P).",
        "pps", [(rate_by(f, "retrans", port), legend(f, "port"))]))

    out.append(row("Where the time goes (tcp_rt's log_ext breakdown)"))
    out.append(timeseries(
        "Mean time per task by part, port $port",
        "Seconds per task of each part of the time breakdown, stacked: "
        "rq_wait + app + sq_wait make the process time (a client's P has no "
        "app), rwnd_limited + sndbuf_limited + app_limited the limited part "
        "of the download (client: upload), the rest of it being sending.  "
        "Each part's sum over its count: only records with the field count. "
        "Empty without log_ext's breakdown fields.  One panel per port.",
        "s", [(mean(f, p), p) for p in PROCESS_PARTS + DOWNLOAD_PARTS],
        stack=True, repeat="port", repeatDirection="h", maxPerRow=2))
    out.append(timeseries(
        "p99 of each part",
        "The p99 of each part on its own (the p99s do not add up to the "
        "process or download p99: tcprt summary splits the p99 band).",
        "s", [(quantile(f, "0.99", p, []), p) for p in PROCESS_PARTS + DOWNLOAD_PARTS],
        w=24))

    if any(M[k] for k in ("module_status", "agent_status", "records_read", "malformed",
                          "overflow")):
        out.append(row("Records lost"))
    if M["module_status"]:
        out.append(status_panel(
            f, "module_status", "tcp_rt: records lost or never made",
            "Increase of tcp_rt's status counters over the rate interval: "
            "log_subbufs_overwritten (log sub-buffers overwritten before "
            "tcprt read them: their records are lost), "
            "log_records_overwritten (those records, exactly: "
            "log_format=binary), reads_lapped, "
            "alloc_failed (connections left untracked), probe_missed, "
            "stats_dropped.  Expected to stay 0.",
            "|".join(LOSS_KEYS)))
    if M["agent_status"]:
        out.append(status_panel(
            f, "agent_status", "tcprt agent: what a sink did not deliver",
            "Increase of tcprt agent's counts of what each sink was handed "
            "and did not deliver, by cause, over the rate interval "
            "(metrics_otlp_*_dropped, windows_late and _future, "
            "ship_cap_dropped, ship_refused, ship_relay_skipped, ...), and "
            "of its failed attempts, which are tried again "
            "(metrics_textfile_failed, metrics_otlp_requests_failed).  "
            "Empty where no agent runs (tcprt export alone).  Expected to "
            "stay 0.",
            AGENT_LOSS_KEYS))
    own = [(k, t) for k, t in (("malformed", "malformed lines"),
                                ("overflow", "container overflow records"))
           if M[k]]
    if own:
        out.append(timeseries(
            "tcprt: malformed lines and container overflow/s",
            "Lines tcprt skipped as malformed, and records counted as "
            "container=\"other\" (past --max-containers).",
            "cps", [("sum by (%s) (rate(%s{%s=~\"$host\"}[%s]))" % (
                L["host"], M[k][0], L["host"], RATE), "%s {{%s}}" % (t, L["host"]))
                for k, t in own]))
    if M["records_read"]:
        out.append(timeseries(
            "tcprt: records read/s",
            "Valid lines tcprt read from tcp_rt's logs.",
            "cps", [("sum by (%s) (rate(%s{%s=~\"$host\"}[%s]))" % (
                L["host"], M["records_read"][0], L["host"], RATE), legend(f, "host"))]))
    return out


def layout(ps):
    """ids in order, and positions: rows across, panels left to right"""
    x = y = h = 0
    for i, p in enumerate(ps, 1):
        g = p["gridPos"]
        if p["type"] == "row" or x + g["w"] > 24:
            x, y, h = 0, y + h, 0
        g["x"], g["y"] = x, y
        p["id"] = i
        x += g["w"]
        h = max(h, g["h"])
        if p["type"] == "row":
            x, y, h = 0, y + 1, 0
        p["gridPos"] = {"h": g["h"], "w": g["w"], "x": g["x"], "y": g["y"]}
    return ps


def dashboard(f):
    vs = [variable(f, v, VARS[:i]) for i, v in enumerate(VARS)]
    return {
        "__inputs": [{
            "name": "DS_PROMETHEUS",
            "label": "Prometheus",
            "description": "The Prometheus-compatible data source with %s." % f["what"],
            "type": "datasource",
            "pluginId": "prometheus",
            "pluginName": "Prometheus",
        }],
        "__elements": {},
        "__requires": [
            {"type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.4.0"},
            {"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
            {"type": "panel", "id": "timeseries", "name": "Time series", "version": ""},
        ],
        "annotations": {"list": [{
            "builtIn": 1,
            "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True,
            "hide": True,
            "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts",
            "type": "dashboard",
        }]},
        "description": "tcp_rt's per-task response times, from %s.  "
                       "Generated by tools/tcprt/grafana/make-dashboards.py." % f["what"],
        "editable": True,
        "fiscalYearStartMonth": 0,
        "graphTooltip": 1,
        "id": None,
        "links": [],
        "liveNow": False,
        "panels": layout(panels(f)),
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": ["tcp_rt", "tcprt"],
        "templating": {"list": vs},
        "time": {"from": "now-6h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": f["title"],
        "uid": f["uid"],
        "version": 1,
        "weekStart": "",
    }


def render(f):
    return json.dumps(dashboard(f), indent=2) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        sys.stderr.write("usage: make-dashboards.py [--check] [DIR]\n")
        return 2
    d = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    st = 0
    for f in FLAVOURS:
        path = os.path.join(d, f["file"])
        text = render(f)
        if check:
            try:
                with open(path) as fh:
                    old = fh.read()
            except OSError as e:
                old = None
                sys.stderr.write("make-dashboards.py: %s\n" % e)
            if old != text:
                sys.stderr.write("make-dashboards.py: %s is not what it would "
                                 "write: run it again\n" % path)
                st = 1
        else:
            with open(path, "w") as fh:
                fh.write(text)
    return st


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
