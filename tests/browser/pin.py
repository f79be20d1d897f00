"""`--ui-pin` in a real browser: a show started with `--ui-pin 2468`
takes no write from a WebSocket client that has not given the PIN and
streams it nothing, the page asks for it, refuses a wrong one, remembers
the right one on that device (a reload asks nothing), asks again on
another device, and five wrong guesses lock the address out. Called by tests/phone.rs:

    python3 tests/browser/pin.py http://127.0.0.1:PORT/ui OSC_PORT
"""

import sys
import time

from playwright.sync_api import sync_playwright

from showpage import Show, chromium, drag, phone, until

SHOW = Show(sys.argv[1], int(sys.argv[2]))
BRIGHTNESS = "/sylva/master/brightness"

# Opens a WebSocket of its own, gives `pin` (when not null), writes
# brightness 4 as binary OSC and reports the text replies.
RAW_WRITE = """async pin => {
  const replies = [];
  const ws = new WebSocket("ws://" + location.host + "/");
  ws.binaryType = "arraybuffer";
  ws.onmessage = e => { if (typeof e.data === "string") replies.push(JSON.parse(e.data).COMMAND); };
  // A refused or closed socket never opens: give up on it after 10 s.
  const opened = await Promise.race([
    new Promise(r => { ws.onopen = () => r(true); ws.onerror = () => r(false); ws.onclose = () => r(false); }),
    new Promise(r => setTimeout(() => r(false), 10000)),
  ]);
  if (!opened) return replies;
  if (pin !== null) ws.send(JSON.stringify({ COMMAND: "PIN", DATA: pin }));
  await new Promise(r => setTimeout(r, 300));
  ws.send(encodeOsc("/sylva/master/brightness", [{ type: "f", value: 4 }]));
  await new Promise(r => setTimeout(r, 300));
  ws.close();
  return replies;
}"""


def main():
    before = SHOW.value(BRIGHTNESS)[0]
    with sync_playwright() as p:
        browser = chromium(p)
        device = phone(browser)
        page = device.new_page()
        page.goto(SHOW.page)
        page.locator("#pin.shown").wait_for(timeout=10_000)

        # A client without the PIN is told so and its write counts for nothing.
        replies = page.evaluate(RAW_WRITE, None)
        if "PIN_REQUIRED" not in replies:
            sys.exit(f"phone page: a client without the PIN was not told it needs one: {replies}")
        time.sleep(0.5)
        if SHOW.value(BRIGHTNESS)[0] != before:
            sys.exit("phone page: a write without the PIN reached the show")

        # Nor does it hear the show: the locked page's LISTEN streams nothing.
        fader = page.locator(f'[role="slider"][data-address="{BRIGHTNESS}"]')
        shown = fader.get_attribute("aria-valuenow")
        SHOW.osc(BRIGHTNESS, 1.7)
        time.sleep(1.0)
        if fader.get_attribute("aria-valuenow") != shown:
            sys.exit("phone page: a client without the PIN heard a change through LISTEN")

        # A wrong PIN is refused, saying so; the right one unlocks.
        page.fill("#pin-code", "1111")
        page.click("#pin-unlock")
        until("a wrong PIN refused", lambda: "wrong PIN" in page.inner_text("#pin-why"), 3)
        page.fill("#pin-code", "2468")
        page.click("#pin-unlock")
        until("the dialog gone once the PIN is right", lambda: page.locator("#pin.shown").count() == 0, 3)
        SHOW.osc(BRIGHTNESS, 1.25)
        until("the unlocked page hearing the show",
              lambda: abs(float(fader.get_attribute("aria-valuenow")) - 1.25) < 0.01, 2)
        drag(page, fader, 0.75)
        until("the unlocked page's fader moving the show",
              lambda: abs(SHOW.value(BRIGHTNESS)[0] - 3.0) < 0.1, 2)

        # The same device asks no more: a reload unlocks by itself.
        page.reload()
        page.locator("#link.up:not(.locked)").wait_for(timeout=10_000)
        if page.locator("#pin.shown").count():
            sys.exit("phone page: the PIN was asked again on the same device")
        drag(page, fader, 0.5)
        until("the reloaded page's fader moving the show",
              lambda: abs(SHOW.value(BRIGHTNESS)[0] - 2.0) < 0.1, 2)

        # Another device is asked.
        other = phone(browser).new_page()
        other.goto(SHOW.page)
        other.locator("#pin.shown").wait_for(timeout=10_000)

        # Five wrong guesses: even the right PIN waits a minute.
        wrong = [other.evaluate(RAW_WRITE, "0000") for _ in range(5)]
        replies = other.evaluate(RAW_WRITE, "2468")
        if "PIN_ACCEPTED" in replies:
            sys.exit(f"phone page: the right PIN was taken straight after five wrong ones: {wrong} then {replies}")
        time.sleep(0.5)
        if abs(SHOW.value(BRIGHTNESS)[0] - 2.0) > 0.1:
            sys.exit("phone page: a locked-out client's write reached the show")
        browser.close()
    print("phone page: the PIN held every check")


main()
