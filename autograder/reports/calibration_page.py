"""The calibration record as a page an instructor reads: one table per assignment, tiers in red when out of reach."""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

STYLE = ("body{font-family:sans-serif;max-width:60rem;margin:2rem auto}td,th{padding:.2rem .6rem;text-align:left}"
         "table{border-collapse:collapse;margin-bottom:1rem}tr:nth-child(even){background:#f4f4f4}"
         ".bad{color:#b00020;font-weight:bold}.ok{color:#1b5e20}")


def _row(*cells) -> str:
    return "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>"


def _run(name: str, run: dict, profile: str) -> str:
    kernel = run["kernel"]
    device = kernel.get("device") or f"CPU, {kernel.get('cpus', '?')} cores"
    rows = [_row("device", device),
            _row("versions", ", ".join(f"{k} {kernel[k]}" for k in ("python", "torch", "transformers", "peft")
                                       if k in kernel)),
            _row("whole run", f"{run['wall_s'] / 60:.1f} min ({run['wall_s']:.0f} s)"),
            _row("training", f"{run['seconds_per_step']:.2f} s per step, {run['steps']} steps"
                 if run["seconds_per_step"] else "not timed"),
            _row("peak memory", f"{kernel.get('peak_rss_mb', 0):.0f} MiB resident"
                 + (f", {kernel['peak_gpu_mb']:.0f} MiB on the GPU" if "peak_gpu_mb" in kernel else ""))]
    if run["error"]:
        rows.append(f'<tr><td>stopped</td><td class="bad">{escape(run["error"])}</td></tr>')
    html = [f"<h2>{escape(name)}</h2><table>{''.join(rows)}</table>"]
    evaluation = run.get("evaluation")
    if evaluation:
        rate = evaluation.get("rate")
        base = evaluation.get("base_rate")
        html.append(f"<p>The reference's own rate, measured by the grader: "
                    f"<b>{'not measured: ' + escape(str(evaluation.get('error'))) if rate is None else f'{rate:.1%}'}"
                    f"</b> of {evaluation.get('total')}"
                    + ("" if base is None else f"; the base model alone: <b>{base:.1%}</b>")
                    + (f" ({escape(evaluation['model'])})" if evaluation.get("model") else "")
                    + ".</p><table><tr><th>tier</th><th>threshold</th><th>margin</th><th></th></tr>")
        for gid, tier in evaluation["tiers"].items():
            verdict = '<td class="ok">reachable</td>' if tier["reachable"] else '<td class="bad">out of reach</td>'
            margin = "" if tier["margin"] is None else f"{tier['margin']:+.1%}"
            html.append(f"<tr><td>{escape(gid)}</td><td>{tier['threshold']:.0%}</td><td>{margin}</td>{verdict}</tr>")
        html.append("</table>")
        if evaluation.get("suggested_tiers"):
            html.append(f"<p>To set the tiers from this measurement, put these thresholds under "
                        f"<code>evaluator.tiers.{escape(profile)}</code> in the assignment's "
                        f"<code>solutions/{escape(name)}/manifest.json</code>, then run "
                        f"<code>python -m autograder generate</code>:</p>"
                        f"<pre>{escape(json.dumps(evaluation['suggested_tiers'], indent=1))}</pre>")
    slow = sorted(run["cells"].items(), key=lambda item: -item[1])[:5]
    html.append("<p>Slowest cells: " + ", ".join(f"{escape(k)} {v:.1f} s" for k, v in slow) + "</p>")
    return "".join(html)


def write_page(record: dict, path: Path) -> None:
    body = "".join(_run(name, run, record["profile"]) for name, run in record["assignments"].items())
    Path(path).write_text(f"<!doctype html><meta charset='utf-8'><title>Calibration</title><style>{STYLE}</style>"
                          f"<h1>Calibration, {escape(record['profile'])} profile</h1>"
                          f"<p>Measured {escape(record['created'])}: each reference recipe run as a student's "
                          f"notebook runs it, on this machine.</p>{body}", encoding="utf-8")
