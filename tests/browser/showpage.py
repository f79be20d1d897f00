"""What the browser tests share: the show's values over OSCQuery, OSC
sent to it over UDP, waiting for a check, and a headless Chromium
(Debian's, driven by Playwright) that asks the internet for nothing."""

import json
import os
import shutil
import socket
import struct
import sys
import time
import urllib.request


class Show:
    """A running show: its page's URL and its OSC port."""

    def __init__(self, page, osc_port):
        self.page = page
        self.osc_port = osc_port
        self.origin = page.rsplit("/ui", 1)[0]
        self.host = self.origin.split("://", 1)[1]

    def value(self, address):
        with urllib.request.urlopen(f"{self.origin}{address}?VALUE", timeout=2) as reply:
            return json.load(reply)["VALUE"]

    def osc(self, address, *floats):
        def string(text):
            data = text.encode() + b"\0"
            return data + b"\0" * (-len(data) % 4)
        packet = string(address) + string("," + "f" * len(floats)) + b"".join(struct.pack(">f", f) for f in floats)
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(packet, ("127.0.0.1", self.osc_port))


def until(what, check, seconds):
    """Waits for `check` to hold; exits saying `what` did not happen."""
    end = time.time() + seconds
    while time.time() < end:
        try:
            got = check()
            if got:
                return got
        except Exception:
            pass
        time.sleep(0.05)
    sys.exit(f"phone page: {what} (not within {seconds} s)")


def chromium_binary():
    """$CHROMIUM, else Debian's `chromium`, Ubuntu's snap or `chromium-browser`."""
    for candidate in [os.environ.get("CHROMIUM"), "chromium", "/snap/bin/chromium", "chromium-browser"]:
        found = candidate and shutil.which(candidate)
        if found:
            return found
    sys.exit("phone page: no Chromium found (make test installs Debian's; on Ubuntu: sudo snap install chromium, or set CHROMIUM)")


def chromium(playwright):
    """A system Chromium, headless, with nothing of its own on the network."""
    return playwright.chromium.launch(
        executable_path=chromium_binary(),
        args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    )


def phone(browser):
    """A 390x844 touch phone."""
    return browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)


def drag(page, fader, fraction):
    """Drags `fader` with the mouse from its left end to `fraction` of it."""
    fader.scroll_into_view_if_needed()
    box = fader.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 5, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * fraction / 2, y, steps=5)
    page.mouse.move(box["x"] + box["width"] * fraction, y, steps=5)
    page.mouse.up()
