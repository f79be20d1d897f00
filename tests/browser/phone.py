"""The phone page in a real browser: headless Chromium (Debian's) driven
by Playwright, against a running show. Called by tests/phone.rs with the
page's URL, the show's OSC port, where to put a screenshot, and a file it
creates when it wants the show restarted (the test restarts it on the
same ports and removes the file); exits non-zero, saying why, when a
check fails.

    python3 tests/browser/phone.py http://127.0.0.1:PORT/ui OSC_PORT SHOT.png RESTART_FILE
"""

import http.server
import json
import os
import sys
import threading
import time
import urllib.request

from playwright.sync_api import sync_playwright

from showpage import Show, chromium, drag, phone, until

SHOW = Show(sys.argv[1], int(sys.argv[2]))
ORIGIN, HOST = SHOW.origin, SHOW.host
value, osc = SHOW.value, SHOW.osc
PAGE = SHOW.page


def cors():
    """The namespace can be read by a page served elsewhere; nothing else
    carries CORS, and no method but GET is offered."""
    with urllib.request.urlopen(f"{ORIGIN}/sylva/master/brightness", timeout=2) as reply:
        if reply.headers.get("Access-Control-Allow-Origin") != "*":
            sys.exit("phone page: the namespace has no CORS header")
    with urllib.request.urlopen(f"{ORIGIN}/ui", timeout=2) as reply:
        if reply.headers.get("Access-Control-Allow-Origin") is not None:
            sys.exit("phone page: the page itself carries CORS")
    preflight = urllib.request.Request(f"{ORIGIN}/", method="OPTIONS",
                                       headers={"Origin": "http://elsewhere.example", "Access-Control-Request-Method": "POST"})
    with urllib.request.urlopen(preflight, timeout=2) as reply:
        methods = reply.headers.get("Access-Control-Allow-Methods", "")
        if reply.status != 204 or "GET" not in methods:
            sys.exit("phone page: the CORS preflight was not answered")
        if "POST" in methods:
            sys.exit(f"phone page: CORS offers {methods}")


# What the security review's page from another origin did: open the show's WebSocket,
# start a take and write the favourites. Returns whether it opened.
FOREIGN = """async url => {
  const string = s => { const b = new TextEncoder().encode(s); const out = new Uint8Array(Math.ceil((b.length + 1) / 4) * 4); out.set(b); return out; };
  const join = (...parts) => { const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0)); let at = 0; for (const p of parts) { out.set(p, at); at += p.length; } return out; };
  const one = new Uint8Array([0, 0, 0, 1]);
  const ws = new WebSocket(url);
  const opened = await new Promise(r => { ws.onopen = () => r(true); ws.onerror = () => r(false); ws.onclose = () => r(false); setTimeout(() => r(false), 3000); });
  if (opened) {
    ws.send(join(string("/sylva/record/on"), string(",i"), one));
    ws.send(join(string("/sylva/ui/favourites"), string(",s"), string('["/bin/echo pwned"]')));
    await new Promise(r => setTimeout(r, 500));
  }
  return opened;
}"""


def foreign(browser):
    """A page from another origin cannot drive the show. It is served from
    another port of this machine: a public site is held back by the
    browser's own local-network checks, a page on the show's network or
    machine is not."""
    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<!doctype html><title>elsewhere</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
    if page.evaluate(FOREIGN, f"ws://{HOST}/"):
        sys.exit("phone page: a page from another origin opened the show's WebSocket")
    time.sleep(0.5)
    if value("/sylva/record/on") != [False] or "pwned" in value("/sylva/ui/favourites")[0]:
        sys.exit("phone page: a page from another origin started a take or wrote the favourites")
    context.close()
    server.shutdown()


def main():
    cors()
    requested = []
    with sync_playwright() as p:
        browser = chromium(p)
        foreign(browser)
        phone_context = phone(browser)
        page = phone_context.new_page()
        page.on("request", lambda r: requested.append(r.url))
        page.on("websocket", lambda ws: requested.append(ws.url))
        page.goto(PAGE)
        fader = page.locator('[role="slider"][data-address="/sylva/master/brightness"]')
        fader.wait_for(timeout=10_000)
        page.locator("#link.up").wait_for(timeout=10_000)

        # A preset with a thumbnail (`sylva thumbs`) shows it on its button;
        # one without shows its name alone, no broken picture.
        until("the first preset's thumbnail on its button", lambda: page.evaluate(
            """() => { const i = document.querySelector('[data-address="/sylva/preset"][data-name="first"] img');
                       return !!i && i.complete && i.naturalWidth === 16; }"""), 5)
        until("no picture where there is no thumbnail", lambda: page.evaluate(
            """() => !document.querySelector('[data-address="/sylva/preset"][data-name="second"] img')"""), 5)

        # Drag the master fader to three quarters: the show's value follows.
        drag(page, fader, 0.75)
        until("the dragged fader moving master.brightness to 3.0",
              lambda: abs(value("/sylva/master/brightness")[0] - 3.0) < 0.1, 2)

        # A long press on a control's name tells what it is, its range and
        # its smoothing.
        label = page.locator(f'[data-param="/sylva/master/brightness"] .label .name')
        box = label.bounding_box()
        page.mouse.move(box["x"] + 4, box["y"] + 4)
        page.mouse.down()
        page.wait_for_timeout(800)
        page.mouse.up()
        until("a long press showing the description and range",
              lambda: "0 to 4" in page.inner_text("#tip.shown") and "follows over 0.05 s" in page.inner_text("#tip.shown"), 2)

        # Two fingers on two faders of a layer at once: one down to 30%,
        # the other up to 70%, in the same touch moves.
        sliders = page.locator('[data-param^="/sylva/shader/aurora/"] [role="slider"]')
        first, second = sliders.nth(0), sliders.nth(1)
        first.scroll_into_view_if_needed()
        b1, b2 = first.bounding_box(), second.bounding_box()
        cdp = phone_context.new_cdp_session(page)

        def touch(kind, points):
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [
                {"x": x, "y": yy, "id": i} for i, (x, yy) in enumerate(points)]})

        y1, y2 = b1["y"] + b1["height"] / 2, b2["y"] + b2["height"] / 2
        touch("touchStart", [(b1["x"] + b1["width"] * 0.5, y1), (b2["x"] + b2["width"] * 0.5, y2)])
        for step in range(1, 6):
            f = 0.5 - 0.04 * step
            touch("touchMove", [(b1["x"] + b1["width"] * f, y1), (b2["x"] + b2["width"] * (1 - f), y2)])
        touch("touchEnd", [])

        def at(slider, fraction):
            low, high = float(slider.get_attribute("aria-valuemin")), float(slider.get_attribute("aria-valuemax"))
            shown = value(slider.get_attribute("data-address"))[0]
            return abs(shown - (low + fraction * (high - low))) < 0.03 * (high - low)

        until("both faders moving under two fingers at once",
              lambda: at(first, 0.3) and at(second, 0.7), 2)

        # A change over OSC moves the control within a second.
        osc("/sylva/master/brightness", 0.5)
        until("the fader following an OSC write",
              lambda: abs(float(fader.get_attribute("aria-valuenow")) - 0.5) < 0.01, 1)

        # Tapping a preset loads it; its layer's controls appear.
        page.locator('[data-address="/sylva/preset"][data-name="second"]').click()
        until("the tapped preset on stage", lambda: value("/sylva/preset") == ["second"], 5)
        page.locator('[data-param^="/sylva/shader/echo/"]').first.wait_for(timeout=5_000)
        until("the playing preset lit",
              lambda: page.locator('[data-name="second"][aria-pressed="true"]').count() == 1, 3)

        # A size the layer rebuilds for is a number typed in and sent on
        # Enter or when the field is left, never a fader swept through
        # every size; a texture input is a picker of its sources.
        page.locator('[data-address="/sylva/preset"][data-name="third"]').click()
        until("the third preset on stage", lambda: value("/sylva/preset") == ["third"], 30)
        size = "/sylva/colony/attraction_count"
        count = page.locator(f'[data-param="{size}"] input[type="number"]')
        count.wait_for(timeout=10_000)
        if page.locator(f'[data-param="{size}"] [role="slider"]').count():
            sys.exit("phone page: a structural parameter shown as a fader")
        until("the size's field showing its value", lambda: count.input_value() == "200", 3)
        count.fill("300")
        page.wait_for_timeout(500)
        if value(size)[0] != 200:
            sys.exit(f"phone page: a size sent while still being typed: {value(size)}")
        count.press("Enter")
        until("the typed size applied on Enter", lambda: value(size)[0] == 300, 3)
        count.fill("250")
        page.locator("header h1").click()
        until("the typed size applied when the field is left", lambda: value(size)[0] == 250, 3)
        texture = "/sylva/shader/picture/picture"
        picker = page.locator(f'[data-param="{texture}"] select')
        picker.wait_for(timeout=5_000)
        if page.locator(f'[data-param="{texture}"] [role="slider"]').count():
            sys.exit("phone page: a texture input shown as a fader")
        sources = picker.locator("option").all_inner_texts()
        if picker.input_value() != "below" or not {"below", "previous", "camera", "layer:colony"} <= set(sources):
            sys.exit(f"phone page: the texture input offers {sources}, showing {picker.input_value()!r}")
        if "layer:shader.picture" in sources:
            sys.exit("phone page: a texture input offered its own layer")
        picker.select_option("layer:colony")
        until("the picked source applied", lambda: value(texture) == ["layer:colony"], 3)
        if "keyboard" not in sources:
            sys.exit(f"phone page: the keyboard is not offered as a source: {sources}")

        # A shader layer's file is picked from the show's shader library.
        file = "/sylva/shader/picture/file"
        shaders = page.locator(f'[data-param="{file}"] select')
        shaders.wait_for(timeout=5_000)
        offered = shaders.locator("option").all_inner_texts()
        if shaders.input_value() != "shader/picture.wgsl" or not {"shader/aurora.wgsl", "isf/kaleidoscope.fs"} <= set(offered):
            sys.exit(f"phone page: the shader file offers {offered}, showing {shaders.input_value()!r}")
        shaders.select_option("isf/kaleidoscope.fs")
        until("the picked shader applied", lambda: value(file) == ["isf/kaleidoscope.fs"], 3)

        # A control pinned to the favourites is kept in the show folder.
        star = page.locator('[data-param="/sylva/master/blackout"] .star')
        star.click()
        until("the favourite kept", lambda: "/sylva/master/blackout" in json.loads(value("/sylva/ui/favourites")[0]), 4)
        page.locator("#tab-favourites").click()
        until("only the favourites shown",
              lambda: page.locator('[data-param="/sylva/master/bpm"]').count() == 0
              and page.locator('[data-param="/sylva/master/blackout"]').count() == 1, 3)
        page.locator("#tab-all").click()
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=sys.argv[3], full_page=False)

        # Sideways on the phone and on a tablet: nothing runs off the side.
        for width, height in [(844, 390), (1180, 820), (820, 1180)]:
            page.set_viewport_size({"width": width, "height": height})
            until(f"the page fitting {width}x{height}",
                  lambda: page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), 2)
        page.set_viewport_size({"width": 390, "height": 844})

        # The show restarts: the page finds it again by itself.
        restart = sys.argv[4]
        open(restart, "w").close()
        until("the show gone", lambda: page.locator("#link.up").count() == 0, 10)
        until("the show restarted", lambda: not os.path.exists(restart), 60)
        page.locator("#link.up").wait_for(timeout=15_000)
        osc("/sylva/master/brightness", 2.0)
        until("the fader following the restarted show",
              lambda: abs(float(fader.get_attribute("aria-valuenow")) - 2.0) < 0.01, 3)
        browser.close()

    outside = [u for u in requested if HOST not in u.split("/")[2]]
    if outside:
        sys.exit(f"phone page: asked for something outside the show: {outside}")
    print(f"phone page: {len(requested)} requests, all to the show; every check held")


main()
