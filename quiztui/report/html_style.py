"""The HTML report's inline stylesheet: a light, print-friendly theme; badges carry their name as
text and a colour; below 760 px the questions table turns into one card per question."""

from __future__ import annotations

STYLE = """
:root{--fg:#1f2328;--muted:#5b6470;--line:#d8dde3;--bg:#fff;--soft:#f6f8fa;
--good:#2e7d32;--good-bg:#e6f4ea;--q:#b26a00;--q-bg:#fff3d6;--poor:#c62828;--poor-bg:#fde8e8;
--inc:#5b6470;--inc-bg:#eceff3;--accent:#2456a6}
*{box-sizing:border-box}
html{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{margin:0;background:var(--bg);color:var(--fg);
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1320px;margin:0 auto;padding:24px 28px 40px}
h1{font-size:26px;margin:2px 0 4px;overflow-wrap:anywhere}
h2{font-size:19px;margin:30px 0 12px;padding-bottom:6px;border-bottom:2px solid var(--line)}
.kicker{margin:0;color:var(--accent);font-weight:600;letter-spacing:.04em;text-transform:uppercase;
font-size:12px}
.sub,.note{color:var(--muted);margin:2px 0;font-size:13px;overflow-wrap:anywhere}
.banner{margin:14px 0 0;padding:10px 14px;border-radius:6px;border:1px solid}
.banner.sim{background:#fff3d6;border-color:#e9c46a;color:#6b4a00}
.banner.stop{background:var(--poor-bg);border-color:#f1a7a7;color:#7f1d1d}
.chips{list-style:none;display:flex;flex-wrap:wrap;gap:10px;padding:0;margin:0 0 16px}
.chip{border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:120px;
font-size:14px;background:var(--soft)}
.chip .n{display:block;font-size:24px;font-weight:700;line-height:1.1}
.chip.b-good{background:var(--good-bg);border-color:#a7d7b0}.chip.b-good .n{color:var(--good)}
.chip.b-questionable{background:var(--q-bg);border-color:#f0d08a}.chip.b-questionable .n{color:var(--q)}
.chip.b-poor{background:var(--poor-bg);border-color:#f1a7a7}.chip.b-poor .n{color:var(--poor)}
.chip.b-incomplete,.chip.b-pending,.chip.b-skip{background:var(--inc-bg)}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:6px 18px;margin:0}
.facts dt{color:var(--muted);font-weight:600}.facts dd{margin:0;overflow-wrap:anywhere}
.tag{display:inline-block;font-size:11px;font-weight:700;letter-spacing:.03em;padding:1px 6px;
border-radius:4px;vertical-align:1px}
.tag.sim{background:#e9a800;color:#fff}.tag.key{background:var(--accent);color:#fff}
.err{color:var(--poor)}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:14px;margin-top:16px}
figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:6px;background:#fff;
break-inside:avoid}
.chart{width:100%;height:auto;display:block}
.chart .ct{font-size:14px;font-weight:600;fill:var(--fg)}
.chart .tick{font-size:11px;fill:var(--muted)}.chart .val{font-size:11px;fill:var(--fg)}
.chart .al{font-size:12px;fill:var(--muted)}
.chart .grid{stroke:#eef0f3}.chart .axis{stroke:#9aa4af}
.fill-good{fill:#43a047}.fill-questionable{fill:#f0ad1c}.fill-poor{fill:#e53935}
.fill-incomplete{fill:#9aa4af}.fill-pending{fill:#c9ced4}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:14px;padding:0;margin:8px 0 0;font-size:13px;
color:var(--muted)}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.sw.fill-good{background:#43a047}.sw.fill-questionable{background:#f0ad1c}
.sw.fill-poor{background:#e53935}.sw.fill-incomplete{background:#9aa4af}
.sw.fill-pending{background:#c9ced4}
.count{font-weight:400;color:var(--muted);font-size:15px}
.tablewrap{overflow-x:auto}
table{border-collapse:collapse;width:100%}
/* fixed layout: the browser lays out (and shows) rows as they arrive, not after all 10,000 */
table.qs{table-layout:fixed}
th,td{text-align:left;vertical-align:top;padding:8px 10px;border-bottom:1px solid var(--line)}
thead th{position:sticky;top:0;background:var(--soft);font-size:12px;color:var(--muted);
text-transform:uppercase;letter-spacing:.03em;z-index:1}
table.qs tr.q{break-inside:avoid}
td.num{white-space:nowrap;font-weight:600;color:var(--muted);overflow-wrap:anywhere}
th.num{width:64px}
td.kn,td.conf{white-space:nowrap;font-variant-numeric:tabular-nums}
th.kn{width:56px}th.bd{width:128px}th.conf{width:124px}th.sugg{width:180px}th.lintc{width:72px}
@media (max-width:1100px){th.bd{width:118px}th.conf{width:100px}th.sugg{width:130px}}
.stem{font-weight:600;margin-bottom:6px;overflow-wrap:anywhere}
.opts{list-style:none;margin:0;padding:0}
.opt{padding:3px 8px;margin:2px 0;border-left:3px solid transparent;border-radius:3px;
overflow-wrap:anywhere}
.opt .l{display:inline-block;width:1.6em;font-weight:700;color:var(--muted)}
.opt.key{background:#eef4fc}
.opt.disagree{border-left-color:var(--poor);background:#fdf1f1}
.opt.key.disagree{background:#f7eef3}
.v{font-weight:700;margin-left:4px}.v-yes{color:var(--good)}.v-no{color:var(--poor)}
.v-none{color:var(--muted);font-weight:600;font-size:12px;border:1px dashed var(--line);padding:0 4px;
border-radius:3px}
.pt{font-size:12px;color:var(--muted);margin-left:4px}
.why{font-size:12.5px;color:var(--muted);margin:1px 0 2px 1.6em}
td .sub{font-size:12px;color:var(--muted)}
.badge{display:inline-block;padding:2px 9px;border-radius:999px;font-size:12.5px;font-weight:700;
border:1px solid;white-space:nowrap}
.badge.b-good{background:var(--good-bg);color:#1e6b2a;border-color:#a7d7b0}
.badge.b-questionable{background:var(--q-bg);color:#8a5200;border-color:#f0d08a}
.badge.b-poor{background:var(--poor-bg);color:#a31515;border-color:#f1a7a7}
.badge.b-incomplete,.badge.b-pending{background:var(--inc-bg);color:var(--inc);border-color:#cfd5dc}
tr.q.b-poor td.num{box-shadow:inset 4px 0 0 var(--poor)}
tr.q.b-questionable td.num{box-shadow:inset 4px 0 0 #f0ad1c}
.lint{display:inline-block;font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
background:var(--soft);border:1px solid var(--line);border-radius:3px;padding:0 4px;margin:1px}
table.plain td{font-size:14px;overflow-wrap:anywhere}
.sev{font-size:12px;font-weight:700}.sev-error{color:var(--poor)}.sev-warning{color:var(--q)}
footer{margin-top:36px;padding-top:10px;border-top:1px solid var(--line);color:var(--muted);
font-size:12px}
@media (max-width:760px){
main{padding:14px 12px 30px}h1{font-size:21px}
.facts{grid-template-columns:1fr}.facts dt{margin-top:6px}
table.qs thead{display:none}
table.qs,table.qs tbody,table.qs tr,table.qs td{display:block;width:auto}
table.qs tr.q{border:1px solid var(--line);border-radius:8px;margin:0 0 12px;padding:4px 0}
table.qs td{border:0;padding:4px 12px}
table.qs td.num{box-shadow:none}
table.qs td:not(.qt):not(.num)::before{content:attr(data-label) ": ";color:var(--muted);
font-size:12px;font-weight:600}
table.qs td:empty{display:none}
table.qs td.kn,table.qs td.bd,table.qs td.conf{display:inline-block;width:auto}
}
@media print{
body{font-size:11pt}main{max-width:none;padding:0}
thead th{position:static}
.tablewrap{overflow:visible}
h2{break-after:avoid}
}
"""
