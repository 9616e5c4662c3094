/// The page of `GET /`: one document, no external assets (it must work in
/// a machine room without internet). It reads the WebSocket, redraws at
/// every reading (10 a second by default), keeps a peak hold per channel,
/// says plainly when the JACK server is gone or the tool does not answer,
/// and reconnects by itself. It draws the short-term loudness of the last
/// hour from the readings it receives (kept in the page), with the target
/// band, true-peak overs and the times a compliance alarm was on.
enum WatchPage {
    static let html = #"""
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>jas</title>
<style>
  body { background: #111; color: #ddd; font: 14px/1.4 system-ui, sans-serif; margin: 1em; }
  h1 { font-size: 16px; font-weight: normal; margin: 0 0 .5em; }
  #banner { display: none; padding: .6em 1em; margin-bottom: 1em; font-weight: bold; border-radius: 4px; }
  #banner.server { display: block; background: #a30; color: #fff; }
  #banner.tool { display: block; background: #555; color: #fff; }
  #banner.silence { display: block; background: #a80; color: #000; }
  #banner.loudness { display: block; background: #c22; color: #fff; }
  #graph { display: block; width: 100%; max-width: 960px; height: 180px; margin-top: 1em; background: #181818; border: 1px solid #333; }
  .caption { font-size: 12px; color: #999; margin-top: .3em; }
  .row { display: flex; align-items: center; gap: .6em; margin: 3px 0; }
  .name { width: 12em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  .bar { position: relative; flex: 1; height: 16px; border: 1px solid #333;
         background: linear-gradient(90deg, #2a2 0%, #2a2 75%, #cc2 88%, #d22 100%); }
  /* The scale's colours stay where they are: the part above the level is covered. */
  .rest { position: absolute; right: 0; top: 0; bottom: 0; width: 100%; background: #222; }
  .hold { position: absolute; top: 0; bottom: 0; width: 2px; background: #fff; left: 0; }
  .mark { position: absolute; top: -2px; bottom: -2px; width: 2px; background: #4af; }
  .num { width: 5.5em; text-align: right; font-variant-numeric: tabular-nums; }
  table { border-collapse: collapse; margin-top: 1em; }
  td { padding: 2px 1em 2px 0; font-variant-numeric: tabular-nums; }
  #record { display: none; }
  select { background: #222; color: #ddd; border: 1px solid #444; }
  #events { margin-top: 1em; font: 12px monospace; color: #aaa; white-space: pre-wrap; max-height: 12em; overflow: auto; }
</style>
</head>
<body>
<h1 id="title">jas</h1>
<div id="banner"></div>
<div class="row"><span>Scale</span>
  <select id="scale">
    <option value="sample_peak_dbfs">Sample peak (dBFS)</option>
    <option value="ppm_type_iib_dbfs">PPM type IIb (EBU)</option>
    <option value="ppm_type_i_dbfs">PPM type I (DIN)</option>
    <option value="vu">VU</option>
  </select></div>
<div id="channels"></div>
<div class="row" style="margin-top:1em"><span class="name">Momentary (LUFS)</span>
  <div class="bar"><div class="rest" id="m-rest"></div><div class="mark" id="target"></div></div>
  <span class="num" id="m">–</span></div>
<table>
  <tr><td>Short-term</td><td id="s">–</td><td>Integrated</td><td id="i">–</td><td>LRA</td><td id="lra">–</td><td>Target</td><td id="target-text">−23 LUFS (EBU R128)</td></tr>
  <tr><td>Metered</td><td id="seconds">–</td><td>Xruns</td><td id="xruns">0</td><td>Server resets</td><td id="resets">0</td><td>Silence</td><td id="silence">no</td></tr>
  <tr><td>This hour</td><td id="hour-i">–</td><td>LRA</td><td id="hour-lra">–</td><td>Today</td><td id="day-i">–</td><td>LRA</td><td id="day-lra">–</td></tr>
  <tr><td>Compliance</td><td id="compliance" colspan="7">no target (jas meter --loudness r128)</td></tr>
</table>
<canvas id="graph" width="960" height="180"></canvas>
<div class="caption">Short-term loudness (LUFS) since the page opened, up to the last hour of audio: the target band shaded blue, the times a compliance alarm was on in red, a true peak over the ceiling as a red mark at the top.</div>
<table id="record">
  <tr><td>State</td><td id="r-state">–</td><td>Elapsed</td><td id="r-elapsed">–</td><td>File</td><td id="r-file">–</td></tr>
  <tr><td>Ring</td><td id="r-ring">–</td><td>Gaps</td><td id="r-gaps">0</td><td>Overruns</td><td id="r-overruns">0</td></tr>
</table>
<div id="events"></div>
<script>
"use strict";
const MIN = -60, HOLD_MS = 2000;
const $ = (id) => document.getElementById(id);
const state = { serverUp: true, silence: false, connected: false, holds: {}, xruns: 0, resets: 0, reading: null,
                target: null, alarms: new Set(), history: [], drawnAt: 0 };
const HISTORY_SECONDS = 3600, GRAPH_LOW = -50, GRAPH_HIGH = -5;
const percent = (db, lo, hi) => (db === null || db === undefined || !isFinite(db)) ? 0 : Math.max(0, Math.min(100, (db - lo) / (hi - lo) * 100));
const show = (v, digits = 1) => (v === null || v === undefined || !isFinite(v)) ? "–" : v.toFixed(digits);
$("target").style.left = percent(-23, -59, 0) + "%";

function banner() {
  const b = $("banner");
  if (!state.connected) { b.className = "tool"; b.textContent = "jas is not answering: reconnecting…"; }
  else if (!state.serverUp) { b.className = "server"; b.textContent = "The JACK server is gone: jas waits for it to come back."; }
  else if (state.silence) { b.className = "silence"; b.textContent = "Silence: the level has stayed below the threshold."; }
  else if (state.alarms.size > 0) {
    b.className = "loudness";
    b.textContent = "Loudness alarm: " + Array.from(state.alarms).sort().join(", ").replace(/_/g, " ") + ".";
  }
  else { b.className = ""; b.textContent = ""; }
}

function channelRows(channels) {
  const box = $("channels");
  if (box.children.length === channels.length) return;
  box.innerHTML = "";
  for (const c of channels) {
    const row = document.createElement("div");
    row.className = "row channel";
    row.innerHTML = '<span class="name"></span><div class="bar"><div class="rest"></div><div class="hold"></div></div>' +
      '<span class="num level"></span><span class="num tp"></span>';
    row.querySelector(".name").textContent = c.channel + " " + c.source;
    box.appendChild(row);
  }
}

function drawReading(r) {
  state.reading = r;
  channelRows(r.channels);
  const key = $("scale").value, now = Date.now();
  const range = key === "vu" ? [-20, 3] : [MIN, 0];
  const rows = $("channels").children;
  r.channels.forEach((c, n) => {
    const row = rows[n], level = c[key];
    row.querySelector(".rest").style.width = (100 - percent(level, range[0], range[1])) + "%";
    const hold = state.holds[n];
    if (level !== null && (!hold || level >= hold.level || now > hold.until)) state.holds[n] = { level, until: now + HOLD_MS };
    const held = state.holds[n];
    row.querySelector(".hold").style.left = held ? "calc(" + percent(held.level, range[0], range[1]) + "% - 2px)" : "0";
    row.querySelector(".level").textContent = show(level);
    row.querySelector(".tp").textContent = show(c.true_peak_dbtp) + " TP";
  });
  $("m").textContent = show(r.momentary_lufs);
  $("m-rest").style.width = (100 - percent(r.momentary_lufs, -59, 0)) + "%";
  $("s").textContent = show(r.short_term_lufs);
  $("i").textContent = show(r.integrated_lufs);
  // Tech 3342: the range is not settled in the programme's first minute (the log's interval lines say).
  $("lra").textContent = show(r.lra_lu) + (state.lraSettled === false ? " (unsettled)" : "");
  $("seconds").textContent = show(r.seconds) + " s";
}

// The last hour of readings on the audio's timeline; a new timeline (the tool restarted) starts afresh.
function remember(r) {
  const h = state.history;
  if (h.length && r.seconds < h[h.length - 1].t) h.length = 0;
  const tp = Math.max(...r.channels.map(c => (c.true_peak_dbtp === null ? -Infinity : c.true_peak_dbtp)));
  h.push({ t: r.seconds, s: r.short_term_lufs, tp: tp, alarm: state.alarms.size > 0 });
  while (h.length && h[0].t < r.seconds - HISTORY_SECONDS) h.shift();
  const now = Date.now();
  if (now - state.drawnAt >= 500) { state.drawnAt = now; drawGraph(); }
}

function drawGraph() {
  const canvas = $("graph"), g = canvas.getContext("2d"), w = canvas.width, ht = canvas.height, h = state.history;
  const y = (lufs) => ht - (Math.max(GRAPH_LOW, Math.min(GRAPH_HIGH, lufs)) - GRAPH_LOW) / (GRAPH_HIGH - GRAPH_LOW) * ht;
  g.clearRect(0, 0, w, ht);
  g.font = "10px sans-serif";
  for (let lufs = GRAPH_LOW + 5; lufs < GRAPH_HIGH; lufs += 5) {
    g.fillStyle = "#2a2a2a"; g.fillRect(0, y(lufs), w, 1);
    g.fillStyle = "#777"; g.fillText(String(lufs), 2, y(lufs) - 2);
  }
  const target = state.target || { target_lufs: -23, tolerance_lu: 0 };
  g.fillStyle = "rgba(60, 140, 255, 0.25)";
  g.fillRect(0, y(target.target_lufs + target.tolerance_lu), w, Math.max(1, y(target.target_lufs - target.tolerance_lu) - y(target.target_lufs + target.tolerance_lu)));
  let alarmed = 0, overs = 0;
  if (h.length) {
    // The span shown grows with what there is, from a minute to the hour kept.
    const end = h[h.length - 1].t, span = Math.min(HISTORY_SECONDS, Math.max(60, end - h[0].t));
    const x = (t) => w - (end - t) / span * w;
    g.fillStyle = "#777";
    for (let ago = span / 4; ago < span; ago += span / 4) {
      g.fillRect(x(end - ago), ht - 6, 1, 6);
      g.fillText("−" + (ago >= 120 ? Math.round(ago / 60) + " min" : Math.round(ago) + " s"), x(end - ago) + 3, ht - 2);
    }
    for (const p of h) {
      if (p.alarm) { alarmed += 1; g.fillStyle = "rgba(220, 40, 40, 0.45)"; g.fillRect(x(p.t), 0, Math.max(1, w / span * 0.1 + 0.5), ht); }
      if (state.target && p.tp > state.target.max_true_peak_dbtp) { overs += 1; g.fillStyle = "#f33"; g.fillRect(x(p.t), 0, 2, 8); }
    }
    g.strokeStyle = "#ddd"; g.lineWidth = 1.5; g.beginPath();
    let drawing = false;
    for (const p of h) {
      if (p.s === null || p.s === undefined) { drawing = false; continue; }
      if (drawing) g.lineTo(x(p.t), y(p.s)); else g.moveTo(x(p.t), y(p.s));
      drawing = true;
    }
    g.stroke();
  }
  canvas.dataset.points = h.length; canvas.dataset.alarmed = alarmed; canvas.dataset.overs = overs;
}

function showCompliance() {
  if (!state.target) return;
  const t = state.target;
  $("target-text").textContent = t.target_lufs + " LUFS ±" + t.tolerance_lu + " LU, true peak ≤ " + t.max_true_peak_dbtp + " dBTP (" + t.loudness_target + ")";
  $("compliance").textContent = state.alarms.size ? "ALARM: " + Array.from(state.alarms).sort().join(", ").replace(/_/g, " ") : "within the target";
}

// The clock's hour and day so far, from the compliance log's last interval line.
function drawClocked(line) {
  state.lraSettled = line.lra_settled;
  $("hour-i").textContent = show(line.hour_integrated_lufs) + " LUFS";
  $("hour-lra").textContent = show(line.hour_lra_lu) + " LU";
  $("day-i").textContent = show(line.day_integrated_lufs) + " LUFS";
  $("day-lra").textContent = show(line.day_lra_lu) + " LU";
}

function drawProgress(p) {
  $("record").style.display = "table";
  $("r-state").textContent = p.server_lost ? "waiting for the server" : (p.recording ? "recording" : "armed");
  const s = p.seconds || 0;
  $("r-elapsed").textContent = new Date(s * 1000).toISOString().substr(11, 10);
  if (p.path) $("r-file").textContent = p.path;
  $("r-ring").textContent = Math.round((p.ring_fill || 0) * 100) + " %";
  $("r-gaps").textContent = p.gaps;
  $("r-overruns").textContent = p.overruns;
  $("xruns").textContent = p.xruns;
}

function note(e) {
  const box = $("events");
  const line = new Date((e.time || Date.now() / 1000) * 1000).toLocaleTimeString() + "  " + JSON.stringify(e);
  box.textContent = (line + "\n" + box.textContent).split("\n").slice(0, 40).join("\n");
}

function handle(e) {
  switch (e.event) {
    case "status":
      $("title").textContent = "jas " + e.tool + " on '" + e.server + "'" + (e.path ? " → " + e.path : "");
      state.serverUp = e.server_up; state.silence = e.silence;
      $("xruns").textContent = e.xruns; $("resets").textContent = e.media_services_resets;
      $("silence").textContent = e.silence ? "YES" : "no";
      if (e.loudness_target) {
        state.target = e; state.alarms = new Set(e.loudness_alarms || []); showCompliance();
      }
      if (e.reading) drawReading(e.reading);
      if (e.last_interval) drawClocked(e.last_interval);
      if (e.progress) drawProgress(e.progress);
      break;
    case "reading": drawReading(e); remember(e); return;
    case "interval": drawClocked(e); return;
    case "hour": case "day": case "gap": break;
    case "loudness_alarm": state.alarms.add(e.alarm); showCompliance(); break;
    case "loudness_alarm_end": state.alarms.delete(e.alarm); showCompliance(); break;
    case "progress": drawProgress(e); return;
    case "mediaServicesWereLost": case "server_lost": state.serverUp = false; break;
    case "mediaServicesWereReset": case "server_back":
      state.serverUp = true; state.resets += 1; $("resets").textContent = state.resets; break;
    case "silence": state.silence = true; $("silence").textContent = "YES"; break;
    case "signal": state.silence = false; $("silence").textContent = "no"; break;
    case "xrun": state.xruns += e.count || 1; $("xruns").textContent = state.xruns; break;
  }
  if (e.event !== "status") note(e);
  banner();
}

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
  ws.onopen = () => { state.connected = true; banner(); };
  ws.onmessage = (m) => { try { handle(JSON.parse(m.data)); } catch (err) { console.log(err); } };
  ws.onclose = () => { state.connected = false; banner(); setTimeout(connect, 1000); };
}
$("scale").onchange = () => { state.holds = {}; if (state.reading) drawReading(state.reading); };
banner();
connect();
</script>
</body>
</html>
"""#
}
