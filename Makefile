# The two commands a newcomer needs on a fresh Debian or Ubuntu machine:
#   make run    builds sylva and opens the default show
#   make test   checks formatting and lints (warnings are errors), then runs
#               every test (GPU tests on Mesa's software Vulkan adapter)
# Both first install the system packages that are missing (as root, or
# through sudo), saying what they install.

SHELL := /bin/bash

# Build tools (cmake and libclang build Ableton Link), ALSA headers for MIDI
# (midir) and audio input (cpal), the Vulkan loader and Mesa's
# software Vulkan driver (lavapipe: tests run on it), ffmpeg (clips in
# media/, `render --video`), and the X11, Wayland and xkbcommon libraries
# winit loads at run time; mingw, so the Windows build is checked too;
# Chromium and pip for the phone page's browser test (Playwright drives it);
# PipeWire and GStreamer's PipeWire plugin (`--send pipewire:NAME`, tested
# against a private daemon).
PACKAGES := build-essential pkg-config cmake libclang-dev libasound2-dev libvulkan1 mesa-vulkan-drivers ffmpeg gcc-mingw-w64-x86-64 chromium python3-pip \
	pipewire pipewire-bin gstreamer1.0-tools gstreamer1.0-pipewire gstreamer1.0-plugins-base \
	libx11-6 libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon0 libxkbcommon-x11-0 \
	libwayland-client0 libwayland-cursor0 libegl1

# Tests pick the software adapter so golden images do not depend on the GPU.
TEST_ADAPTER ?= llvmpipe

export XDG_RUNTIME_DIR ?= /tmp

.PHONY: run test deps rust windows-target playwright

run: deps rust
	cargo run --release --locked

test: deps rust windows-target playwright
	cargo fmt --check
	cargo clippy --locked --all-targets -- -D warnings
	cargo clippy --locked --target x86_64-pc-windows-gnu --no-default-features -- -D warnings
	SYLVA_ADAPTER=$(TEST_ADAPTER) cargo test --locked

# The phone page's test drives Debian's Chromium with Playwright (its
# Python package only; no browser is downloaded).
playwright:
	@python3 -c "import playwright" 2>/dev/null || python3 -m pip install --quiet --break-system-packages playwright 2>/dev/null || python3 -m pip install --quiet playwright

# Every cfg(windows) path (the NDI runtime's name, DirectShow cameras) is
# compile-checked on each change; this adds the target's standard library.
windows-target:
	@rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu || rustup target add x86_64-pc-windows-gnu

deps:
	@if ! command -v apt-get >/dev/null 2>&1; then \
		echo "deps: not a Debian/Ubuntu system; install a Vulkan (or Metal/DX12) driver and, on Linux, ALSA headers yourself"; \
		exit 0; \
	fi; \
	missing=""; \
	for p in $(PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	else echo "deps: missing packages:$$missing"; echo "deps: run as root or install sudo"; exit 1; fi; \
	echo "deps: installing:$$missing"; \
	$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing

rust:
	@command -v cargo >/dev/null 2>&1 || { \
		echo "cargo not found. Install Rust with rustup:"; \
		echo "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh"; \
		echo "then open a new shell (or: source \$$HOME/.cargo/env) and run make again."; \
		exit 1; }
	@cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1 || { \
		echo "make test also needs rustfmt and clippy:"; \
		echo "  rustup component add rustfmt clippy"; \
		exit 1; }
