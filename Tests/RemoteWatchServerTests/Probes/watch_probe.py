"""Reads a `jas ... --http` server the way its users' tools do, and prints JSON.

  metrics URL             /metrics parsed by prometheus_client's text parser:
                          {"name{label=value,...}": value, ...}
  openmetrics URL         /metrics asked for as OpenMetrics (Accept header), parsed by prometheus_client's
                          OpenMetrics parser: {"content_type": ..., "families": N, "values": {...}}
  ws URL SECONDS          every WebSocket message for SECONDS: {"messages": [...]}
  scrape URL SECONDS      GET /metrics every second for SECONDS (a Prometheus server's load)
  post URL [HEADER]       a POST (HEADER: an Authorization value): {"status": ..., "body": ...}
  get URL [HEADER [COOKIE]]  a GET likewise, with a Cookie header when given: {"status", "body", "set_cookie"}
  wsopen URL [COOKIE]     opens the WebSocket: {"status": 101, "first": the first message} or the refusal's status
  browser URL SHOT        the page in headless Chromium (selenium, Debian's chromedriver):
                          two reads of the meter elements 1.5 s apart, a screenshot at SHOT
  report FILE SHOT        a jas report page in headless Chromium: its marks, graph and hour rows
                          as the browser sees them, how long it took to load, a screenshot at SHOT
"""
import asyncio
import json
import sys
import time
import urllib.request


def metrics(url):
    from prometheus_client.parser import text_string_to_metric_families
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            key = sample.name + ("{" + labels + "}" if labels else "")
            value = sample.value
            values[key] = value if value == value and abs(value) != float("inf") else str(value)
    print(json.dumps(values))


def openmetrics(url):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    request = urllib.request.Request(url, headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    with urllib.request.urlopen(request, timeout=5) as response:
        kind = response.headers.get("Content-Type")
        text = response.read().decode()
    families = list(text_string_to_metric_families(text))
    values = {}
    for family in families:
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            values[sample.name + ("{" + labels + "}" if labels else "")] = str(sample.value)
    print(json.dumps({"content_type": kind, "families": len(families), "values": values}))


def scrape(url, seconds):
    end = time.monotonic() + seconds
    count = 0
    while time.monotonic() < end:
        urllib.request.urlopen(url, timeout=5).read()
        count += 1
        time.sleep(1)
    print(json.dumps({"scrapes": count}))


def post(url, authorization):
    import urllib.error
    request = urllib.request.Request(url, data=b"", method="POST")
    if authorization:
        request.add_header("Authorization", authorization)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            print(json.dumps({"status": response.status, "body": response.read().decode()}))
    except urllib.error.HTTPError as error:
        print(json.dumps({"status": error.code, "body": error.read().decode()}))


def get(url, authorization, cookie):
    import urllib.error
    request = urllib.request.Request(url, method="GET")
    if authorization:
        request.add_header("Authorization", authorization)
    if cookie:
        request.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            print(json.dumps({"status": response.status, "body": response.read().decode()[:300],
                              "set_cookie": response.headers.get("Set-Cookie")}))
    except urllib.error.HTTPError as error:
        print(json.dumps({"status": error.code, "body": error.read().decode()[:300], "set_cookie": None}))


async def websocket_open(url, cookie):
    import websockets
    headers = {"Cookie": cookie} if cookie else None
    try:
        async with websockets.connect(url, open_timeout=5, additional_headers=headers) as socket:
            first = json.loads(await asyncio.wait_for(socket.recv(), timeout=5))
            print(json.dumps({"status": 101, "first": first.get("event")}))
    except websockets.exceptions.InvalidStatus as refused:
        print(json.dumps({"status": refused.response.status_code}))


async def websocket(url, seconds):
    import websockets
    messages = []
    deadline = time.monotonic() + seconds
    async with websockets.connect(url, open_timeout=5, max_size=None) as socket:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                message = await asyncio.wait_for(socket.recv(), timeout=left)
            except asyncio.TimeoutError:
                break
            except websockets.ConnectionClosed:
                messages.append({"event": "_closed", "at": time.monotonic()})
                break
            entry = json.loads(message)
            entry["_received"] = time.monotonic()
            messages.append(entry)
    print(json.dumps({"messages": messages}))


def chromium(window):
    """Debian's headless Chromium through its chromedriver, with a window of `window` (e.g. "1000,700")."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=" + window]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def browser(url, shot, wait_after_shot):
    driver = chromium("1000,700")
    try:
        driver.set_page_load_timeout(15)
        driver.get(url)
        read = """return {channels: document.querySelectorAll('#channels .channel').length,
                  covered: Array.from(document.querySelectorAll('#channels .rest')).map(e => e.style.width),
                  levels: Array.from(document.querySelectorAll('#channels .level')).map(e => e.textContent),
                  seconds: document.getElementById('seconds').textContent,
                  momentary: document.getElementById('m').textContent,
                  banner: document.getElementById('banner').textContent,
                  compliance: document.getElementById('compliance').textContent,
                  graph: Object.assign({}, document.getElementById('graph').dataset),
                  title: document.getElementById('title').textContent}"""
        deadline = time.monotonic() + 10
        first = driver.execute_script(read)
        while first["channels"] == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
            first = driver.execute_script(read)
        time.sleep(1.5)
        second = driver.execute_script(read)
        driver.save_screenshot(shot)
        later = []
        # After the tool restarts: read again every second for a while (the page reconnects by itself).
        end = time.monotonic() + wait_after_shot
        while time.monotonic() < end:
            time.sleep(1)
            later.append(driver.execute_script(read))
        print(json.dumps({"first": first, "second": second, "later": later}))
    finally:
        driver.quit()


def report(path, shot):
    driver = chromium("1300,1200")
    try:
        started = time.monotonic()
        driver.get("file://" + path)
        loaded = time.monotonic() - started
        read = """const marks = (kind) => Array.from(document.querySelectorAll('#loudness rect.' + kind)).map(r => ({
                      from: r.dataset.from, to: r.dataset.to, detail: r.dataset.detail, width: r.getBBox().width}));
                  return {alarms: marks('alarm'), silences: marks('silence'), gaps: marks('gap'),
                          columns: Number(document.getElementById('short-term').dataset.columns),
                          shortTermLength: document.getElementById('short-term').getTotalLength(),
                          hours: Array.from(document.querySelectorAll('#hours tr[data-from]')).map(r => ({
                              from: r.dataset.from, integrated: r.dataset.integrated}))}"""
        result = driver.execute_script(read)
        result["load_seconds"] = loaded
        driver.save_screenshot(shot)
        print(json.dumps(result))
    finally:
        driver.quit()


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "metrics":
        metrics(sys.argv[2])
    elif command == "openmetrics":
        openmetrics(sys.argv[2])
    elif command == "scrape":
        scrape(sys.argv[2], float(sys.argv[3]))
    elif command == "post":
        post(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif command == "get":
        get(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None,
            sys.argv[4] if len(sys.argv) > 4 else None)
    elif command == "wsopen":
        asyncio.run(websocket_open(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
    elif command == "ws":
        asyncio.run(websocket(sys.argv[2], float(sys.argv[3])))
    elif command == "report":
        report(sys.argv[2], sys.argv[3])
    elif command == "browser":
        browser(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 0)
    else:
        sys.exit(f"unknown command {command}")
