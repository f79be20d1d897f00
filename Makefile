# The two commands a newcomer needs on a fresh Debian or Ubuntu machine:
#   make run    installs what the show needs, builds sylva, opens the default show
#   make test   installs what the tests need besides, checks formatting and
#               lints (warnings are errors), then runs every test (GPU tests
#               on Mesa's software Vulkan adapter), runs the Windows build
#               under Wine and compile-checks the macOS one
# Both first install the system packages that are missing (as root, or
# through sudo), saying what they install. A package the command cannot do
# without stops it with a message; an optional one that cannot be installed
# is named with what goes without it, and the install goes on.

SHELL := /bin/bash

# What the show needs: build tools (cmake and libclang build Ableton Link),
# ALSA headers for MIDI (midir) and audio input (cpal), the Vulkan loader
# and Mesa's software Vulkan driver (the show falls back to it without a
# GPU driver), and the X11, Wayland and xkbcommon libraries winit loads at
# run time.
RUN_PACKAGES := build-essential pkg-config cmake libclang-dev libasound2-dev libvulkan1 mesa-vulkan-drivers \
	libx11-6 libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon0 libxkbcommon-x11-0 \
	libwayland-client0 libwayland-cursor0 libegl1
# The show plays without it: clips and cameras in media/, `render --video`.
RUN_OPTIONAL := ffmpeg

# What the tests need besides: ffmpeg (clip and recording tests), mingw (the
# Windows build is linted and built, glslang's C++ compiled for it by the
# posix-threads g++, whose std::mutex glslang needs), Wine with Xvfb (the
# Windows build run: tests/platforms/windows.sh; xsetroot paints the screen
# it captures), pip (Playwright's Python
# package for the phone page's browser test), PipeWire and GStreamer's
# PipeWire plugin (`--send pipewire:NAME`, tested against a private daemon).
# Chromium is installed by `browser` below: Ubuntu's is a snap. This is the
# one list: CI (.ci/run) installs it through `make test-deps`.
TEST_PACKAGES := $(RUN_PACKAGES) ffmpeg gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 python3-pip \
	pipewire pipewire-bin gstreamer1.0-tools gstreamer1.0-pipewire gstreamer1.0-plugins-base \
	wine wine64 xvfb xauth x11-xserver-utils

# Tests pick the software adapter so golden images do not depend on the GPU.
TEST_ADAPTER ?= llvmpipe

export XDG_RUNTIME_DIR ?= /tmp

.PHONY: run test run-deps test-deps rust lints windows-target browser playwright

run: run-deps rust
	cargo run --release --locked

test: test-deps rust lints windows-target browser playwright
	cargo fmt --check
	cargo clippy --locked --all-targets -- -D warnings
	CXX_x86_64_pc_windows_gnu=x86_64-w64-mingw32-g++-posix cargo clippy --locked --target x86_64-pc-windows-gnu --no-default-features --features glslang -- -D warnings
	SYLVA_ADAPTER=$(TEST_ADAPTER) cargo test --locked
	tests/platforms/windows.sh
	tests/platforms/macos.sh

# install REQUIRED OPTIONAL: the missing required packages in one go (a
# failure stops make), then each missing optional one alone (a failure is
# said and skipped).
define install
	@if ! command -v apt-get >/dev/null 2>&1; then \
		echo "deps: not a Debian/Ubuntu system; install a Vulkan (or Metal/DX12) driver and, on Linux, ALSA headers yourself"; \
		exit 0; \
	fi; \
	installed() { dpkg-query -W -f='$${Status}' "$$1" 2>/dev/null | grep -q "install ok installed"; }; \
	missing=""; for p in $(1); do installed "$$p" || missing="$$missing $$p"; done; \
	optional=""; for p in $(2); do installed "$$p" || optional="$$optional $$p"; done; \
	if [ -z "$$missing$$optional" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; \
	elif command -v sudo >/dev/null 2>&1; then sudo="sudo"; \
	else echo "deps: missing packages:$$missing$$optional"; echo "deps: run as root or install sudo"; exit 1; fi; \
	$$sudo apt-get update -qq || echo "deps: apt-get update failed; trying with the package lists there are"; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing:$$missing"; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing || { \
			echo "deps: could not install:$$missing"; exit 1; }; \
	fi; \
	for p in $$optional; do \
		echo "deps: installing $$p"; \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq "$$p" || \
			echo "deps: could not install $$p; going on without it ($(3))"; \
	done
endef

run-deps:
	$(call install,$(RUN_PACKAGES),$(RUN_OPTIONAL),clips and cameras in media/ and render --video need it)

test-deps:
	$(call install,$(TEST_PACKAGES),,)

# The phone page's browser test drives a system Chromium. Debian packages
# it as `chromium`; Ubuntu's `chromium` is only a way into its snap, which
# apt cannot install in a container, so there it is asked for by name.
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || [ -n "$$CHROMIUM" ]; then exit 0; fi; \
	if grep -qi '^ID=ubuntu' /etc/os-release 2>/dev/null; then \
		echo "browser: the phone page's test needs Chromium. Ubuntu ships it as a snap:"; \
		echo "  sudo snap install chromium"; \
		echo "or point CHROMIUM at any Chromium or Chrome binary (CHROMIUM=/path/to/chrome make test)."; \
		exit 1; \
	fi; \
	$(MAKE) --no-print-directory test-deps TEST_PACKAGES=chromium

# Playwright's Python package only; no browser is downloaded.
playwright:
	@python3 -c "import playwright" 2>/dev/null || python3 -m pip install --quiet --break-system-packages playwright 2>/dev/null || python3 -m pip install --quiet playwright

# Every cfg(windows) path (the NDI runtime's name, DirectShow cameras) is
# compile-checked on each change; this adds the target's standard library.
windows-target:
	@rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu || rustup target add x86_64-pc-windows-gnu

# Cargo, at the version Cargo.toml's rust-version asks for.
rust:
	@command -v cargo >/dev/null 2>&1 || { \
		echo "cargo not found. Install Rust with rustup:"; \
		echo "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh"; \
		echo "then open a new shell (or: source \$$HOME/.cargo/env) and run make again."; \
		exit 1; }
	@need=$$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml); \
	have=$$(rustc --version 2>/dev/null | cut -d' ' -f2); \
	printf '%s\n%s\n' "$$need" "$$have" | sort -V -C || { \
		echo "sylva needs Rust $$need or newer; $$(command -v cargo) is $$have."; \
		echo "A Debian or Ubuntu packaged cargo is older: install Rust with rustup instead"; \
		echo "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh"; \
		echo "(or, with rustup already there: rustup update stable), make sure ~/.cargo/bin"; \
		echo "comes first on PATH, and run make again."; \
		exit 1; }

# make test lints; make run does not need these.
lints:
	@cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1 || { \
		echo "make test also needs rustfmt and clippy:"; \
		echo "  rustup component add rustfmt clippy"; \
		exit 1; }
